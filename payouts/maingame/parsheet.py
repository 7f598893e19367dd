"""The main game's par sheet (spec/parsheet.md, "The main game"): return, house edge, chart.

``main_parsheet(rules)`` returns the JSON object the command prints; results
are cached per rule set, so the admin can show them beside every table
configuration at no cost after the first time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from rounds.engine.rules import RuleSet

from .analysis import ACE, TEN, Chooser, MainGame, Shoe, Spot, remove
from .dealer import VALUES

UP_LABELS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
CHART_UPS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 0)  # printed 2 .. 9, T, A


def best(shoe: Shoe, up: int, spot: Spot, values: dict[str, float]) -> str:
    """Composition-dependent play: the action worth most for these exact cards."""
    return max(values, key=values.__getitem__)


class Chart:
    """A basic-strategy chart: one letter per hard total, soft total, pair and up card.

    A pair's letter is the pair's own first play, as printed charts give it: ``P`` split, or
    the play of the unsplit pair (``H``, ``S``, ``D``, ``Ds``, ``R``), which may differ from
    its hard total's (7,7 against a ten, one deck: surrender; hard 14 there is a hit). The
    totals are derived from the hands that are not pairs and from every hand after a hit.
    Split hands play by their totals, and split again where the pair says ``P``."""

    def __init__(self) -> None:
        self.totals: dict[tuple[bool, int, int], str] = {}
        self.surrender: dict[tuple[bool, int, int], bool] = {}
        self.pairs: dict[tuple[int, int], str] = {}

    def choose(self, shoe: Shoe, up: int, spot: Spot, values: dict[str, float]) -> str:
        t, soft = spot.total
        if len(values) == 1:
            return "S"
        if "R" in values and self.surrender.get((soft, t, up)):
            return "R"
        return resolve(
            self.totals.get((soft, t, up), "H" if values["H"] > values["S"] else "S"), values
        )

    def __hash__(self) -> int:
        return id(self)


def resolve(letter: str, values: dict[str, float]) -> str:
    """The action a chart letter takes where ``values`` are the actions allowed: ``D`` is
    double else hit, ``Ds`` double else stand."""
    if letter in ("D", "Ds"):
        return "D" if "D" in values else ("H" if letter == "D" else "S")
    return letter


def initial_hands(game: MainGame) -> Iterator[tuple[float, int, int, int, Shoe]]:
    """(probability, up card, P1, P2, shoe left) of every initial deal, P1 <= P2."""
    full = game.full
    n = sum(full)
    for up in range(10):
        p_up = full[up] / n
        after_up = remove(full, up)
        for p1 in range(10):
            p_1 = after_up[p1] / (n - 1)
            after_1 = remove(after_up, p1)
            for p2 in range(p1, 10):
                p_2 = after_1[p2] / (n - 2)
                if not p_2:
                    continue
                weight = p_up * p_1 * p_2 * (1 if p1 == p2 else 2)
                yield weight, up, p1, p2, remove(after_1, p2)


def hole_blackjack(shoe: Shoe, up: int) -> float:
    """The chance that the dealer's second card makes a blackjack with this up card."""
    n = sum(shoe)
    if up == ACE:
        return shoe[TEN] / n
    if up == TEN:
        return shoe[ACE] / n
    return 0.0


def may_split(game: MainGame, rank: int) -> bool:
    return game.rules.max_splits > 0


PairPlay = Callable[[Shoe, int, int, Spot], float]  # (shoe, up, rank, spot) -> value


def round_value(game: MainGame, play: Chooser, pair_value: PairPlay) -> float:
    """Expected result per initial bet: ``play`` decides every hand but an initial pair,
    whose value ``pair_value`` gives."""
    ratio = float(game.rules.blackjack_ratio)
    ev = 0.0
    for weight, up, p1, p2, shoe in initial_hands(game):
        p_bj = hole_blackjack(shoe, up)
        if {p1, p2} == {ACE, TEN}:
            ev += weight * ratio * (1.0 - p_bj)  # a dealer blackjack pushes it
            continue
        spot = Spot(VALUES[p1] + VALUES[p2], ACE in (p1, p2), 2)
        if p1 == p2:
            keep = pair_value(shoe, up, p1, spot)
        else:
            keep = game.value(shoe, up, spot, play)
        if game.peeked(up):
            ev += weight * (-p_bj + (1.0 - p_bj) * keep)
        else:
            ev += weight * keep
    return ev


def best_pair_value(game: MainGame) -> PairPlay:
    """Composition-dependent play of a pair: the best of its own plays and splitting."""

    def value(shoe: Shoe, up: int, rank: int, spot: Spot) -> float:
        keep = game.value(shoe, up, spot, best)
        if may_split(game, rank):
            return max(keep, game.split(shoe, up, rank, best))
        return keep

    return value


def chart_pair_value(game: MainGame, chart: Chart) -> PairPlay:
    """A pair played by the chart's letter for it; its later decisions by the chart."""

    def value(shoe: Shoe, up: int, rank: int, spot: Spot) -> float:
        letter = chart.pairs[(rank, up)]
        if letter == "P" and may_split(game, rank):
            return game.split(shoe, up, rank, chart.choose)
        values = game.actions(shoe, up, spot, chart.choose)
        if letter == "R" and "R" not in values or letter == "P":
            return game.value(shoe, up, spot, chart.choose)  # the hard total's play
        return values[resolve(letter, values)]

    return value


def derive_chart(game: MainGame, play: Chooser, pairs_from: Any) -> Chart:
    """One decision per (soft, total, up card): the action with the most expected value over
    every composition that reaches it, weighted by how often ``play`` reaches it; initial
    pairs have their own letter (``pairs_from``) and count for the totals only after a hit."""
    sums: dict[tuple[bool, int, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    doubles: dict[tuple[bool, int, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    surrenders: dict[tuple[bool, int, int], float] = defaultdict(float)
    chart = Chart()

    def visit(shoe: Shoe, up: int, spot: Spot, weight: float) -> None:
        values = game.actions(shoe, up, spot, play)
        if len(values) == 1:
            return
        if play(shoe, up, spot, values) == "H":
            hits(shoe, up, spot, weight)
        t, soft = spot.total
        key = (soft, t, up)
        for action in ("S", "H"):
            sums[key][action] += weight * values[action]
        if "D" in values:
            doubles[key]["D"] += weight * values["D"]
            doubles[key]["S"] += weight * values["S"]
            doubles[key]["H"] += weight * values["H"]
        if "R" in values and not spot.split:
            surrenders[key] += weight * (
                values["R"] - max(values["S"], values["H"], values.get("D", -9))
            )

    def hits(shoe: Shoe, up: int, spot: Spot, weight: float) -> None:
        p = game.draws(shoe, up)
        for r in range(10):
            if shoe[r]:
                after = spot.add(r)
                if after.total[0] <= 21:
                    visit(remove(shoe, r), up, after, weight * p[r])

    for weight, up, p1, p2, shoe in initial_hands(game):
        if {p1, p2} == {ACE, TEN}:
            continue
        if game.peeked(up):
            weight *= 1.0 - hole_blackjack(shoe, up)
        spot = Spot(VALUES[p1] + VALUES[p2], ACE in (p1, p2), 2)
        if p1 != p2:
            visit(shoe, up, spot, weight)
        elif pairs_from(p1, up) == "H":
            hits(shoe, up, spot, weight)

    for key, s in sums.items():
        base = "H" if s["H"] > s["S"] else "S"
        letter = base
        d = doubles.get(key)
        if d and d["D"] > d[base]:
            letter = "D" if base == "H" else "Ds"
        chart.totals[key] = letter
        chart.surrender[key] = surrenders.get(key, 0.0) > 0
    for up in range(10):
        for rank in range(10):
            chart.pairs[(rank, up)] = pairs_from(rank, up)
    return chart


def pair_decisions(game: MainGame, play: Chooser) -> Any:
    """A pair's own first play (one composition per pair and up card): split, or the best
    chart letter for the unsplit pair, later decisions made by ``play``."""
    full = game.full

    @cache
    def decide(rank: int, up: int) -> str:
        shoe = remove(remove(remove(full, up), rank), rank)
        if min(shoe) < 0:
            return "S"  # no such pair in this shoe
        spot = Spot(2 * VALUES[rank], rank == ACE, 2)
        values = game.actions(shoe, up, spot, play)
        plays = {k: v for k, v in values.items() if k in ("S", "H", "D", "R")}
        if may_split(game, rank):
            plays["P"] = game.split(shoe, up, rank, play)
        letter = max(plays, key=plays.__getitem__)
        if letter == "D":
            return "D" if values["H"] > values["S"] else "Ds"
        return letter

    return decide


@cache
def main_parsheet(rules: RuleSet) -> dict[str, Any]:
    """The main game's par sheet for one rule set (cached per rule set)."""
    game = MainGame(rules)
    cd = 1.0 + round_value(game, best, best_pair_value(game))

    play: Chooser = best
    chart = Chart()
    seen: list[dict] = []
    for _ in range(4):  # re-derive until the chart no longer changes
        pairs = pair_decisions(game, play)
        chart = derive_chart(game, play, pairs)
        play = chart.choose
        snapshot = {"t": chart.totals, "s": chart.surrender, "p": chart.pairs}
        if snapshot in seen:
            break
        seen.append(snapshot)
    rtp = 1.0 + round_value(game, chart.choose, chart_pair_value(game, chart))
    return {
        "bet": "main",
        "rules": rules.to_dict(),
        "method": "exact",
        "rtp": rtp,
        "rtp_composition_dependent": cd,
        "house_edge": 1.0 - rtp,
        "chart": chart_json(chart),
    }


def chart_json(chart: Chart) -> dict[str, dict[str, dict[str, str]]]:
    def by_up(key_of) -> dict[str, str]:
        return {UP_LABELS[up]: key_of(up) for up in CHART_UPS}

    hard = {
        str(t): by_up(lambda up, t=t: chart.totals.get((False, t, up), "H" if t < 17 else "S"))
        for t in range(5, 21)
    }
    soft = {
        str(t): by_up(lambda up, t=t: chart.totals.get((True, t, up), "S")) for t in range(13, 21)
    }
    pairs = {
        f"{UP_LABELS[r]},{UP_LABELS[r]}": by_up(lambda up, r=r: chart.pairs[(r, up)])
        for r in CHART_UPS
    }
    surrender = {
        str(t): by_up(lambda up, t=t: "R" if chart.surrender.get((False, t, up)) else "-")
        for t in range(5, 21)
        if any(chart.surrender.get((False, t, up)) for up in range(10))
    }
    return {"hard": hard, "soft": soft, "pairs": pairs, "surrender": surrender}
