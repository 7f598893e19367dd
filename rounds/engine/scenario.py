"""Scenario files (spec/scenario-format.md, v1): read, validate, play, report.

``play_scenario(data, parse_paytables)`` takes the decoded JSON of a scenario and
returns the outcome in the spec's output shape, or raises ``EngineError`` with the
one line the command prints. Everything is validated before the first card, and
the round itself refuses actions before applying them, so an invalid scenario
never produces an outcome.

The special bets are the caller's: ``parse_paytables`` reads the scenario's
``special_bets`` (None when it has none) into what the table offers, each paytable
with its evaluator (``payouts.specials.parse_paytables``; rounds/engine/specials.py).
This package imports no app.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .cards import Card, check_copies, parse_card
from .errors import EngineError, shown
from .money import check_stake_limits, parse_money
from .round import (
    Bet,
    BonusAssigned,
    Burn,
    CardDrawn,
    Decision,
    Event,
    Phase,
    Round,
    SeatLeft,
    Timeout,
)
from .rules import RuleSet
from .seating import MAX_SEATS, Seating
from .specials import SpecialBets

# Reads a scenario's "special_bets" (None: absent) into the special bets the table offers.
PaytablesParser = Callable[[object], SpecialBets]

TOP_LEVEL_FIELDS = frozenset(
    {
        "rules",
        "boxes",
        "limits",
        "special_bets",
        "burn",
        "bonus",
        "description",
        "stations",
        "shoe",
        "abandoned_hands",
        "mode",
        "behind",
    }
)
MODES = ("common_draw", "seat")
BEHIND_FIELDS = frozenset({"cap", "special_bets"})
LEAVE = "leave"  # seat mode: the seated player leaves; its later questions are abandoned
# What a question left unanswered gets (a jurisdiction's setting; an extension of the format,
# docs/scenarios.md): the table's timeout action, or the basic strategy of the rules.
ABANDONED_HANDS = ("timeout", "basic_strategy")
# Given the scenario, how its abandoned play decisions are made (None: the timeout action):
# the engine knows no strategy chart, its caller does (payouts/maingame/abandoned.py).
Abandoned = Callable[[Round, str], Decision | None]
AbandonedHands = Callable[["Scenario"], Abandoned | None]
STATION_FIELDS = frozenset({"credits", "bets", "actions"})
SEAT_STATION_FIELDS = STATION_FIELDS | {"seat", "behind", "follow"}
MAX_BOXES = 9


@dataclass(frozen=True)
class Scenario:
    rules: RuleSet
    boxes: int
    bets: list[Bet]
    credits: dict[str, Decimal]
    actions: dict[str, list[str]]
    burn: int
    shoe: list[Card]
    paytables: SpecialBets
    special_limits: tuple[Decimal, Decimal] | None
    bonus: dict[tuple[str, int], Decimal]
    abandoned_hands: str = "timeout"
    seating: Seating | None = None  # seat mode (docs/scenarios.md); None: common draw


def parse_scenario(data: object, parse_paytables: PaytablesParser) -> Scenario:
    """Validate a decoded scenario; raise EngineError naming what is wrong."""
    if not isinstance(data, dict):
        raise EngineError("a scenario must be a JSON object")
    unknown = sorted(set(data) - TOP_LEVEL_FIELDS)
    if unknown:
        raise EngineError(f"scenario: unknown field {unknown[0]!r}")
    rules = RuleSet.from_dict(data.get("rules"))
    boxes = data.get("boxes", 3)
    if isinstance(boxes, bool) or not isinstance(boxes, int) or not 1 <= boxes <= MAX_BOXES:
        raise EngineError(f"boxes must be a whole number from 1 to {MAX_BOXES}, got {shown(boxes)}")
    limits = _parse_limits(data.get("limits"))
    paytables = parse_paytables(data.get("special_bets"))
    burn = data.get("burn", 0)
    if isinstance(burn, bool) or not isinstance(burn, int) or burn < 0:
        raise EngineError(f"burn must be a whole number of cards, 0 or more, got {shown(burn)}")
    abandoned_hands = data.get("abandoned_hands", "timeout")
    if abandoned_hands not in ABANDONED_HANDS:
        raise EngineError(
            f'abandoned_hands must be "timeout" or "basic_strategy", got {shown(abandoned_hands)}'
        )

    mode = data.get("mode", "common_draw")
    if mode not in MODES:
        raise EngineError(f'mode must be "common_draw" or "seat", got {shown(mode)}')
    if mode == "seat" and boxes > MAX_SEATS:
        raise EngineError(f"a seat-mode table has 1 to {MAX_SEATS} seats, got {boxes}")
    if mode != "seat" and "behind" in data:
        raise EngineError('behind: bets behind a seat need "mode": "seat"')

    stations = data.get("stations")
    if not isinstance(stations, dict) or not stations:
        raise EngineError("stations must be an object with at least one station")
    bets: list[Bet] = []
    credits: dict[str, Decimal] = {}
    actions: dict[str, list[str]] = {}
    for station, entry in stations.items():
        if mode == "seat" and isinstance(entry, dict):
            entry = _seat_station(station, entry, boxes)
        credits[station], station_bets, actions[station] = _parse_station(
            station, entry, boxes, limits
        )
        bets.extend(station_bets)
    seating = _parse_seating(data, stations, bets) if mode == "seat" else None
    if not bets:
        raise EngineError("no station has a bet")
    bonus = _parse_bonus(data.get("bonus"), credits, boxes)

    shoe_data = data.get("shoe")
    if not isinstance(shoe_data, list):
        raise EngineError('shoe must be a list of cards such as "8S"')
    shoe = []
    for position, text in enumerate(shoe_data, start=1):
        try:
            shoe.append(parse_card(text))
        except EngineError as exc:
            raise EngineError(f"shoe card {position}: {exc.reason}") from None
    check_copies(shoe, rules.decks)
    return Scenario(
        rules,
        boxes,
        bets,
        credits,
        actions,
        burn,
        shoe,
        paytables,
        limits.get("special"),
        bonus,
        abandoned_hands,
        seating,
    )


def _seat_station(station: str, entry: dict, boxes: int) -> dict:
    """A seat-mode station as ``_parse_station`` reads it: its own seat's bets and its bets
    behind other seats together (bets by box), checked against the seat it holds."""
    unknown = sorted(set(entry) - SEAT_STATION_FIELDS)
    if unknown:
        raise EngineError(f"unknown field {unknown[0]!r}", station)
    seat = entry.get("seat")
    if seat is not None and (
        isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= boxes
    ):
        raise EngineError(f"seat must be a seat from 1 to {boxes}, got {shown(seat)}", station)
    own, behind = entry.get("bets", {}), entry.get("behind", {})
    for field_name, by_box in (("bets", own), ("behind", behind)):
        if not isinstance(by_box, dict):
            raise EngineError(
                f'{field_name} must be an object by seat, such as {{"1": {{"main": "10"}}}}',
                station,
            )
    for key in own:
        if seat is None or key != str(seat):
            raise EngineError(
                f"bets: a station bets on its own seat only (behind: for another seat), "
                f"not on seat {key}",
                station,
            )
    for key in behind:
        if seat is not None and key == str(seat):
            raise EngineError(f"behind: seat {key} is the station's own seat", station)
    follow = entry.get("follow", False)
    if not isinstance(follow, bool):
        raise EngineError(f"follow must be true or false, got {shown(follow)}", station)
    actions = entry.get("actions", [])
    if isinstance(actions, list) and LEAVE in actions:
        if seat is None:
            raise EngineError('"leave" is for a seated station only', station)
        if actions.index(LEAVE) != len(actions) - 1:
            raise EngineError('"leave" must be the last action: the player has gone', station)
    plain = {k: v for k, v in entry.items() if k in STATION_FIELDS}
    plain["bets"] = {**own, **behind}
    return plain


def _parse_seating(data: dict, stations: dict, bets: list[Bet]) -> Seating:
    seats: dict[int, str] = {}
    follow = set()
    for station, entry in stations.items():
        seat = entry.get("seat")
        if seat is not None:
            if seat in seats:
                raise EngineError(f"seat {seat} is taken by {seats[seat]}", station, seat)
            seats[seat] = station
        if entry.get("follow", False):
            follow.add(station)
    rules = data.get("behind", {})
    if not isinstance(rules, dict):
        raise EngineError('behind must be an object such as {"cap": "50"}')
    unknown = sorted(set(rules) - BEHIND_FIELDS)
    if unknown:
        raise EngineError(f"behind: unknown field {unknown[0]!r}")
    cap = None if rules.get("cap") is None else parse_money(rules["cap"], "behind: cap")
    codes = rules.get("special_bets", [])
    if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
        raise EngineError('behind: special_bets must be a list of bet codes such as ["21+3"]')
    seating = Seating(seats, frozenset(follow), cap, frozenset(codes))
    seating.check(bets)
    return seating


def _parse_bonus(
    data: object, credits: dict[str, Decimal], boxes: int
) -> dict[tuple[str, int], Decimal]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EngineError('bonus must be an object such as {"s1": {"2": 300}}')
    bonus = {}
    for station, by_box in data.items():
        if station not in credits:
            raise EngineError(f"bonus: unknown station {station!r}")
        if not isinstance(by_box, dict):
            raise EngineError('bonus must be an object such as {"s1": {"2": 300}}', station)
        for box_key, value in by_box.items():
            box = _parse_box(station, box_key, boxes)
            if isinstance(value, bool) or not isinstance(value, (int, Decimal, str)):
                raise EngineError(
                    f"bonus multiplier must be a number, got {shown(value)}", station, box
                )
            try:
                bonus[(station, box)] = Decimal(value)
            except ArithmeticError:
                raise EngineError(
                    f"bonus multiplier must be a number, got {shown(value)}", station, box
                ) from None
    return bonus


def _parse_limits(data: object) -> dict[str, tuple[Decimal, Decimal]]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EngineError('limits must be an object such as {"main": ["1", "100"]}')
    limits = {}
    for kind, pair in data.items():
        if kind not in ("main", "special"):
            raise EngineError(f"limits: unknown field {kind!r}")
        if not isinstance(pair, list) or len(pair) != 2:
            raise EngineError(f"limits: {kind} must be [min, max]")
        low = parse_money(pair[0], f"limits: {kind} minimum")
        high = parse_money(pair[1], f"limits: {kind} maximum")
        if low > high:
            raise EngineError(f"limits: {kind} minimum {low} is above its maximum {high}")
        limits[kind] = (low, high)
    return limits


def _parse_station(
    station: str, entry: object, boxes: int, limits: dict[str, tuple[Decimal, Decimal]]
) -> tuple[Decimal, list[Bet], list[str]]:
    if not isinstance(entry, dict):
        raise EngineError("must be an object with credits, bets and actions", station)
    unknown = sorted(set(entry) - STATION_FIELDS)
    if unknown:
        raise EngineError(f"unknown field {unknown[0]!r}", station)
    if "credits" not in entry:
        raise EngineError("credits are missing", station)
    try:
        credits = parse_money(entry["credits"], "credits")
    except EngineError as exc:
        raise exc.at(station) from None

    bets_data = entry.get("bets", {})
    if not isinstance(bets_data, dict):
        raise EngineError('bets must be an object by box, such as {"1": {"main": "10"}}', station)
    bets = []
    for box_key, codes in bets_data.items():
        box = _parse_box(station, box_key, boxes)
        if not isinstance(codes, dict) or not codes:
            raise EngineError(
                'bets on a box must be an object such as {"main": "10"}', station, box
            )
        for code, value in codes.items():
            try:
                stake = parse_money(value, f"{code} stake")
            except EngineError as exc:
                raise exc.at(station, box) from None
            if stake <= 0:
                raise EngineError(f"{code} stake must be more than 0.00", station, box)
            if code != "main":
                bets.append(Bet(station, box, code, stake))  # placement: Round checks it
                continue
            check_stake_limits("main", stake, limits.get("main"), station, box)
            bets.append(Bet(station, box, code, stake))

    actions = entry.get("actions", [])
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise EngineError('actions must be a list of strings such as ["hit", "stand"]', station)
    return credits, bets, list(actions)


def _parse_box(station: str, key: str, boxes: int) -> int:
    if not (isinstance(key, str) and key.isascii() and key.isdigit() and 1 <= int(key) <= boxes):
        raise EngineError(f"there is no box {key!r} (the table has boxes 1 to {boxes})", station)
    return int(key)


def play_scenario(
    data: object, parse_paytables: PaytablesParser, abandoned_hands: AbandonedHands | None = None
) -> dict[str, Any]:
    """Play a decoded scenario through the rules engine; return the spec's output object.
    ``abandoned_hands`` makes the abandoned decisions of a scenario that asks for basic
    strategy (without it, such a scenario is refused)."""
    scenario = parse_scenario(data, parse_paytables)
    rnd = new_round(scenario)
    used = drive(scenario, lambda: rnd, rnd.apply, abandoned_by(scenario, abandoned_hands))
    return {
        "dealer": rnd.dealer_outcome(),
        "stations": {
            station: {
                "credits": outcome["credits"],
                "hands": outcome["hands"],
                "special": outcome["special"],
                "insurance": outcome["insurance"],
            }
            for station in scenario.credits
            for outcome in [rnd.settlement(station)]
        },
        "burned": [str(c) for c in rnd.burned],
        "unused": [str(c) for c in scenario.shoe[used:]],
    }


def new_round(scenario: Scenario) -> Round:
    """Close the scenario's bets: the engine round before its first card."""
    return Round(
        scenario.rules,
        scenario.bets,
        scenario.credits,
        scenario.boxes,
        scenario.paytables,
        scenario.special_limits,
        scenario.seating,
    )


def abandoned_by(scenario: Scenario, abandoned_hands: AbandonedHands | None) -> Abandoned | None:
    """How the scenario's abandoned decisions are made: None for the timeout action."""
    if scenario.abandoned_hands == "timeout":
        return None
    made = abandoned_hands(scenario) if abandoned_hands is not None else None
    if made is None:
        raise EngineError(f"abandoned_hands {scenario.abandoned_hands!r} needs its strategy")
    return made


def drive(
    scenario: Scenario,
    state: Callable[[], Round],
    apply: Callable[[Event], Any],
    abandoned: Abandoned | None = None,
) -> int:
    """Play the scenario's shoe and answers into a round until it is settled.

    ``state()`` gives the round as it is now and ``apply(event)`` applies one event:
    the engine directly here, or the live table's services (every event logged and
    paid through the ledger). A question whose station has no answer left gets
    ``abandoned(round, station)``'s decision when it makes one, else the timeout.
    Returns how many shoe cards were used."""
    shoe = iter(scenario.shoe)
    used = 0

    def next_card(for_what: str) -> Card:
        nonlocal used
        card = next(shoe, None)
        if card is None:
            raise shoe_exhausted(state(), for_what)
        used += 1
        return card

    for _ in range(scenario.burn):
        apply(Burn(next_card("burn")))
    queues = {s: deque(a) for s, a in scenario.actions.items()}
    for _ in _bounded_steps():
        rnd = state()
        if rnd.settled:
            break
        target = rnd.awaiting_card
        if target is not None:
            apply(CardDrawn(next_card(target)))
            continue
        if rnd.awaiting_bonus:
            _assign_bonus_games(rnd, scenario.bonus, apply)
            continue
        if rnd.phase is Phase.BONUS:  # the pick is not one of the station's actions
            for station in rnd.prompted_stations:
                apply(Decision(station, "pick_1"))
            continue
        for station in rnd.prompted_stations:
            if queues[station] and queues[station][0] == LEAVE:
                queues[station].clear()  # the seated player leaves when next asked
                apply(SeatLeft(station))
                break  # the table answers for the seat from now on: look again
            automatic = abandoned(rnd, station) if abandoned and not queues[station] else None
            if queues[station]:
                apply(Decision(station, queues[station].popleft()))
            elif automatic is not None:
                apply(automatic)
            else:
                apply(Timeout(station))
    return used


def _assign_bonus_games(
    rnd: Round, wanted: dict[tuple[str, int], Decimal], apply: Callable[[Event], Any]
) -> None:
    """Put the scenario's ``bonus`` multiplier (else the lowest) behind each station's pick_1.

    The assignment goes in as the round's BonusAssigned event, the same seam the live
    table's secure RNG feeds."""
    for station, box, multipliers in rnd.awaiting_bonus:
        value = wanted.get((station, box), min(multipliers))
        if value not in multipliers:
            listed = ", ".join(str(m) for m in multipliers)
            raise EngineError(
                f"bonus {value} is not one of this hard 6's multipliers {listed}", station, box
            )
        rest = list(multipliers)
        rest.remove(next(m for m in rest if m == value))
        second, third = rest
        apply(BonusAssigned(station, box, (value, second, third)))


def _bounded_steps() -> Iterator[int]:
    # A round uses at most a few hundred events; this bound only guards against an engine bug.
    yield from range(100_000)
    raise RuntimeError("the round did not end")  # pragma: no cover


def shoe_exhausted(rnd: Round, target: str) -> EngineError:
    """The refusal for a shoe that ran out, named after whom the missing card was for.

    In the deal the card was for a box that several stations may share (common draw):
    the line names the first station, in the scenario's order, with a bet on it."""
    reason = "the shoe ran out of cards"
    if target.startswith("box:"):
        box = int(target[4:])
        station = next((b.station for b in rnd.bets if b.box == box), None)
        return EngineError(reason + " during the deal", station, box)
    if target == "hands":
        station, box = rnd.asking_hands()[0]
        return EngineError(reason, station, box)
    if target == "burn":
        return EngineError(reason + " while burning")
    return EngineError(reason + " for the dealer")
