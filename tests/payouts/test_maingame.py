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
    assert chart["pairs"]["8,8"]["A"] == "P" and chart["pairs"]["T,T"]["6"] == "-"
    assert [chart["pairs"]["9,9"][u] for u in "7TA"] == ["-", "-", "-"]
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
