"""The main game's exact analysis: dealer tables, resplit model, seed 000's return, the chart,
and the return measured by playing the computed chart through the rules engine."""

import json
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from payouts.maingame.analysis import expected_hands
from payouts.maingame.dealer import DealerTable
from payouts.maingame.parsheet import main_parsheet
from rounds.engine import RuleSet

SEED_000 = RuleSet(decks=8, dealer_hits_soft_17=False, max_splits=3, late_surrender=True)


def brute_force_dealer(shoe, up, h17):
    """The dealer's outcomes by plain recursion over each card drawn, without the multiset trick."""
    values = list(range(1, 11))

    @cache
    def go(counts, hard, ace, n):
        t = hard + 10 if ace and hard <= 11 else hard
        soft = ace and hard <= 11
        if n == 2 and t == 21:
            return {6: Fraction(1)}
        if hard > 21:
            return {5: Fraction(1)}
        if n >= 2 and (t > 17 or (t == 17 and not (soft and h17))):
            return {t - 17: Fraction(1)}
        out = {}
        left = sum(counts)
        for r in range(10):
            if counts[r]:
                rest = counts[:r] + (counts[r] - 1,) + counts[r + 1 :]
                for k, p in go(rest, hard + values[r], ace or r == 0, n + 1).items():
                    out[k] = out.get(k, 0) + Fraction(counts[r], left) * p
        return out

    return go(tuple(shoe), values[up], up == 0, 1)


@pytest.mark.parametrize("up,h17", [(0, False), (5, True), (9, False), (1, True)])
def test_dealer_table_matches_plain_recursion_on_one_deck(up, h17):
    shoe = [4] * 9 + [16]
    shoe[up] -= 1
    shoe[3] -= 2  # a player holding two 4s
    table = DealerTable(up, h17, decks=1)
    fast = table.probabilities(tuple(shoe))
    slow = brute_force_dealer(shoe, up, h17)
    expected = np.array([float(slow.get(k, 0)) for k in range(7)])
    assert fast == pytest.approx(expected, abs=1e-13)
    assert fast.sum() == pytest.approx(1.0)


def test_resplit_model_without_resplits_is_two_hands():
    assert expected_hands(0.0, 4) == (2.0, 0.0)
    no_pair, paired = expected_hands(0.1, 2)  # no hand may be added: a drawn pair stays
    assert (no_pair, paired) == pytest.approx((1.8, 0.2))
    no_pair, paired = expected_hands(0.1, 4)
    assert 2.0 < no_pair + paired <= 4.0


@pytest.fixture(scope="module")
def seed_000_sheet():
    return main_parsheet(SEED_000)


def test_seed_000_return_is_the_published_99_64_percent(seed_000_sheet):
    # Seed 000 (In For 6): "The expected return for this game is 99.64%."
    assert seed_000_sheet["rtp"] == pytest.approx(0.9964, abs=0.0001)
    assert seed_000_sheet["house_edge"] == pytest.approx(1 - seed_000_sheet["rtp"])
    # Composition-dependent play can only do better than one decision per total.
    assert seed_000_sheet["rtp_composition_dependent"] >= seed_000_sheet["rtp"]
    assert seed_000_sheet["method"] == "exact"
    assert seed_000_sheet["rules"] == SEED_000.to_dict()


def test_seed_000_chart_is_the_textbook_eight_deck_s17_das_chart(seed_000_sheet):
    chart = seed_000_sheet["chart"]
    assert chart["hard"]["11"]["A"] == "H" and chart["hard"]["11"]["T"] == "D"
    assert [chart["hard"]["12"][u] for u in "23456"] == ["H", "H", "S", "S", "S"]
    assert chart["hard"]["16"]["7"] == "H" and chart["hard"]["13"]["2"] == "S"
    assert [chart["soft"]["18"][u] for u in "2789TA"] == ["S", "S", "S", "H", "H", "H"]
    assert [chart["soft"]["18"][u] for u in "3456"] == ["Ds"] * 4
    assert chart["pairs"]["8,8"]["A"] == "P" and chart["pairs"]["T,T"]["6"] == "S"
    assert [chart["pairs"]["9,9"][u] for u in "7TA"] == ["S", "S", "S"]
    assert chart["surrender"]["16"]["T"] == "R" and chart["surrender"]["15"]["T"] == "R"
    assert "17" not in chart["surrender"]


def test_engine_rounds_played_by_the_chart_return_the_computed_rtp(seed_000_sheet):
    from bench.maingame import play

    mean, se = play(SEED_000, seed_000_sheet["chart"], rounds=20_000, seed=7)
    assert abs(1 + mean - seed_000_sheet["rtp"]) < 3 * se


def test_command_main_needs_rules(run_command):
    assert run_command("parsheet", "--bet", "main") == (
        2,
        "",
        "--rules is required for the main game: a scenario rules file\n",
    )


def test_command_main_decks_must_agree(tmp_path, run_command):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"decks": 6}))
    assert run_command("parsheet", "--bet", "main", "--rules", str(path), "--decks", "8") == (
        2,
        "",
        "--decks 8 and the rules' decks 6 disagree\n",
    )


def test_command_main_refuses_an_unknown_rule(tmp_path, run_command):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"deck": 6}))
    assert run_command("parsheet", "--bet", "main", "--rules", str(path)) == (
        2,
        "",
        "rules: unknown rule 'deck'\n",
    )


def test_command_main_prints_and_caches_the_sheet(
    tmp_path, monkeypatch, seed_000_sheet, run_command
):
    monkeypatch.setenv("TABLEHUB_PARSHEET_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"decks": 8, "max_splits": 3, "late_surrender": True}))
    code, out, _ = run_command("parsheet", "--bet", "main", "--rules", str(path))
    assert code == 0
    assert json.loads(out)["rtp"] == pytest.approx(seed_000_sheet["rtp"])
    assert len(list((tmp_path / "cache").glob("main-*.json"))) == 1


def brute_force_after_peek(shoe, up, hard, ace, n, h17):
    """A hand's value when the player hits below 17, by plain recursion over the real order of
    the cards: the hole card first (not completing a blackjack: the peek found none), then the
    player's cards, then the dealer's, all from the same small shoe."""
    values = list(range(1, 11))
    excluded = 9 if up == 0 else 0

    def take(counts, r):
        return counts[:r] + (counts[r] - 1,) + counts[r + 1 :]

    def total(h, a):
        return h + 10 if a and h <= 11 else h

    def dealer(counts, d_hard, d_ace, player_total):
        t = total(d_hard, d_ace)
        soft = d_ace and d_hard <= 11
        if d_hard > 21:
            return Fraction(1)
        if t > 17 or (t == 17 and not (soft and h17)):
            return Fraction((player_total > t) - (player_total < t))
        left = sum(counts)
        return sum(
            Fraction(counts[r], left)
            * dealer(take(counts, r), d_hard + values[r], d_ace or r == 0, player_total)
            for r in range(10)
            if counts[r]
        )

    def player(counts, p_hard, p_ace, hole):
        if p_hard > 21:
            return Fraction(-1)
        t = total(p_hard, p_ace)
        if t >= 17:
            return dealer(counts, values[up] + values[hole], up == 0 or hole == 0, t)
        left = sum(counts)
        return sum(
            Fraction(counts[r], left)
            * player(take(counts, r), p_hard + values[r], p_ace or r == 0, hole)
            for r in range(10)
            if counts[r]
        )

    allowed = sum(c for r, c in enumerate(shoe) if r != excluded)
    return sum(
        Fraction(shoe[h], allowed) * player(take(shoe, h), hard, ace, h)
        for h in range(10)
        if shoe[h] and h != excluded
    )


@pytest.mark.parametrize("up", [0, 9])
def test_the_players_draws_after_a_peek_are_exact(up):
    """After a peek found no blackjack the hole card is not the completing rank; the player's
    draws must reflect that (a small shoe, where it matters most, against plain recursion)."""
    from payouts.maingame.analysis import MainGame, Spot

    game = MainGame(RuleSet(decks=1, late_surrender=False, double_after_split=False))
    shoe = (2, 1, 2, 1, 1, 2, 1, 1, 1, 4)  # the hole card is still in it, unseen

    def hit_below_17(_shoe, _up, spot, values):
        return "H" if spot.total[0] < 17 and "H" in values else "S"

    ours = game.value(shoe, up, Spot(12, False, 2), hit_below_17)
    exact = brute_force_after_peek(shoe, up, 12, False, 2, h17=False)
    assert ours == pytest.approx(float(exact), abs=1e-12)


def test_six_deck_basic_strategy_matches_the_published_house_edge_table():
    """Wizard of Odds house-edge calculator, 6 decks, S17, DAS, split to 2 hands, no
    surrender, peek, 3:2, basic strategy with a continuous shuffler: 0.460 % (docs/maingame.md)."""
    rules = RuleSet(decks=6, max_splits=1, late_surrender=False)
    assert main_parsheet(rules)["house_edge"] == pytest.approx(0.00460, abs=0.00005)


def test_single_deck_basic_strategy_plays_a_pair_by_its_own_cell():
    """1 deck, S17, DAS, split to 2 hands, late surrender, peek, 6:5 (docs/maingame.md): the
    published basic-strategy edge is 1.258 %, Hoppe's exact analysis 1.263 %. The one cell
    where a pair's own play differs from its hard total's: 7,7 against a ten surrenders,
    hard 14 there hits; played by the total the edge would be 1.26488 %."""
    sheet = main_parsheet(RuleSet(decks=1, max_splits=1, blackjack_pays="6:5"))
    assert sheet["house_edge"] == pytest.approx(0.01258, abs=0.00005)
    assert sheet["house_edge"] == pytest.approx(0.0126279, abs=0.0000005)
    chart = sheet["chart"]
    assert chart["pairs"]["7,7"]["T"] == "R" and chart["hard"]["14"]["T"] == "H"
    assert "14" not in chart["surrender"]
    assert chart["pairs"]["8,8"]["T"] == "P" and chart["pairs"]["5,5"]["9"] == "D"


def brute_force_split(shoe, up, rank, hole_card, peek, obo):
    """A split pair's value (both hands, per initial bet) by plain recursion over the real order of
    the cards from one small shoe: the hole card (under a peek, not the rank completing a
    blackjack), hand 1's cards to its end, then hand 2's, then the dealer's. Both hands are scored
    against that one dealer hand. The player doubles two-card 10 and 11, hits hard totals below 17
    and soft totals below 18; split aces take one card each. With OBO (no hole card) hand 1 keeps
    the box's first card: it loses its original bet to a dealer blackjack, hand 2 nothing."""
    values = list(range(1, 11))
    bust, blackjack = 22, 99

    def take(counts, r):
        return counts[:r] + (counts[r] - 1,) + counts[r + 1 :]

    def total(hard, ace):
        return hard + 10 if ace and hard <= 11 else hard

    @cache
    def finals(counts):
        """(probability, shoe left, final total, stake) of every way one split hand ends."""
        out = []

        def go(counts, hard, ace, n, stake, p):
            t = total(hard, ace)
            if hard > 21:
                out.append((p, counts, bust, stake))
                return
            if stake == 2 or (n == 2 and rank == 0):  # a double, or split aces: one card only
                out.append((p, counts, t, stake))
                return
            if n == 2 and t in (10, 11):
                stake = 2
            elif not (t < 17 or (ace and hard <= 11 and t < 18)):
                out.append((p, counts, t, stake))
                return
            left = sum(counts)
            for r in range(10):
                if counts[r]:
                    q = p * counts[r] / left
                    go(take(counts, r), hard + values[r], ace or r == 0, n + 1, stake, q)

        go(counts, values[rank], rank == 0, 1, 1, 1.0)
        return tuple(out)

    @cache
    def dealer(counts, hard, ace, n):
        t = total(hard, ace)
        if n == 2 and t == 21:
            return {blackjack: 1.0}
        if hard > 21:
            return {bust: 1.0}
        if n >= 2 and t >= 17:
            return {t: 1.0}
        out = {}
        left = sum(counts)
        for r in range(10):
            if counts[r]:
                for k, p in dealer(take(counts, r), hard + values[r], ace or r == 0, n + 1).items():
                    out[k] = out.get(k, 0) + counts[r] / left * p
        return out

    def score(t, stake, outcome, loses_to_blackjack):
        if t == bust:
            return -stake
        if outcome == blackjack:
            return -loses_to_blackjack
        if outcome == bust:
            return stake
        return stake * ((t > outcome) - (t < outcome))

    def both_hands(counts, d_hard, d_ace, d_n):
        ev = 0.0
        for p1, after_1, t1, s1 in finals(counts):
            for p2, after_2, t2, s2 in finals(after_1):
                for outcome, pd in dealer(after_2, d_hard, d_ace, d_n).items():
                    first = score(t1, s1, outcome, 1 if obo else s1)
                    second = score(t2, s2, outcome, 0 if obo else s2)
                    ev += p1 * p2 * pd * (first + second)
        return ev

    if not hole_card:
        return both_hands(shoe, values[up], up == 0, 1)
    excluded = {0: 9, 9: 0}.get(up) if peek else None
    allowed = sum(c for r, c in enumerate(shoe) if r != excluded)
    return sum(
        shoe[h] / allowed * both_hands(take(shoe, h), values[up] + values[h], up == 0 or h == 0, 2)
        for h in range(10)
        if shoe[h] and h != excluded
    )


@pytest.mark.parametrize(
    "rank,up,hole_card,obo",
    [(7, 0, True, False), (8, 9, True, False), (0, 9, True, False), (9, 5, True, False)]
    + [(7, 9, False, False), (7, 9, False, True)],
)
def test_a_split_is_worth_both_hands_against_one_dealer_hand_drawn_after_them(
    rank, up, hole_card, obo
):
    """MainGame.split values each split hand from the shoe less the pair (and the up card), with
    the dealer drawing from a shoe that has not lost the other hand's cards. That is exact for two
    hands played by a fixed strategy (docs/maingame.md): checked against the real order of the
    cards, with both hands and then the dealer drawn from one small shoe."""
    from payouts.maingame.analysis import MainGame

    rules = RuleSet(decks=1, max_splits=1, late_surrender=False, hole_card=hole_card, obo=obo)
    game = MainGame(rules)
    shoe = (2, 2, 2, 2, 2, 2, 2, 2, 2, 7)  # after the pair and the up card; the hole card in it

    def play(_shoe, _up, spot, values):
        t, soft = spot.total
        if "D" in values and t in (10, 11):
            return "D"
        return "H" if "H" in values and (t < 17 or (soft and t < 18)) else "S"

    ours = game.split(shoe, up, rank, play)
    exact = brute_force_split(shoe, up, rank, hole_card, game.peeked(up), obo)
    assert ours == pytest.approx(exact, abs=1e-10)
