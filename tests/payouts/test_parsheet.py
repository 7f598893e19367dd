"""Par sheets: the spec's Sweet 16 figures, published figures, and exact enumeration."""

import json
from fractions import Fraction

import pytest

from payouts.specials import BETS, hits, paid_combination, parse_paytable
from payouts.specials.defaults import default_paytable, default_source
from payouts.specials.parsheet import (
    EACH_CARD,
    combination_counts,
    count_deals,
    dealer_bust_distribution,
    special_parsheet,
)
from rounds.engine import RuleSet

SWEET_16 = {"sweet_16": 160, "suited_16": 16, "same_colour_16": 12, "mixed_colour_16": 6}


def test_sweet_16_reproduces_the_spec_example_and_seed_003():
    sheet = special_parsheet("sweet_16", 8, parse_paytable("sweet_16", SWEET_16))
    expected = {
        "sweet_16": (0.0007414272474513, 0.1193697868396664),
        "suited_16": (0.0183503243744208, 0.3119555143651529),
        "same_colour_16": (0.0192771084337349, 0.2506024096385542),
        "mixed_colour_16": (0.0385542168674699, 0.2698795180722892),
    }
    for row in sheet["combinations"]:
        probability, ret = expected[row["code"]]
        assert row["probability"] == pytest.approx(probability, rel=1e-12)
        assert row["return"] == pytest.approx(ret, rel=1e-12)
        assert row["pays"] == SWEET_16[row["code"]]
    assert sheet["hit_frequency"] == pytest.approx(0.0769230769230769, rel=1e-12)
    assert sheet["rtp"] == pytest.approx(0.9518072289156626, rel=1e-12)  # 95.18 %
    assert sheet["house_edge"] == pytest.approx(0.0481927710843373, rel=1e-12)
    assert sheet["method"] == "exact" and sheet["decks"] == 8 and sheet["bet"] == "sweet_16"


@pytest.mark.parametrize(
    "code,decks,table,house_edge",
    [
        # Lucky Ladies' common table: published house edge 24.05 % with 8 decks.
        (
            "lucky_ladies",
            8,
            {
                "qh_pair_dealer_bj": 1000,
                "qh_pair": 125,
                "matched_20": 19,
                "suited_20": 9,
                "any_20": 4,
            },
            0.2405,
        ),
        # Lucky Lucky pay table 1: published house edge 2.66 % with 6 decks.
        (
            "lucky_lucky",
            6,
            {
                "suited_777": 200,
                "suited_678": 100,
                "777": 50,
                "678": 30,
                "suited_21": 15,
                "21": 3,
                "20": 2,
                "19": 2,
            },
            0.0266,
        ),
        # Lucky Aces pay table 1 (the Wizard of Odds, our default): house edge 14.90 %, 8 decks.
        (
            "lucky_aces",
            8,
            {
                "four_aces": 500,
                "three_suited_aces": 250,
                "three_aces": 30,
                "two_suited_aces": 12,
                "two_aces": 5,
                "ace_of_diamonds": 2,
                "one_ace": 1,
            },
            0.1490,
        ),
        # Super 7s (our default for 7s): published house edges 9.01 % (8 decks), 15.92 % (4).
        *[
            (
                "7s",
                decks,
                {"suited_777": 5000, "777": 500, "suited_77": 100, "77": 50, "first_7": 3},
                edge,
            )
            for decks, edge in ((8, 0.0901), (4, 0.1592))
        ],
        # Royal Match (our default for suits): published house edges 6.46 % (8), 10.86 % (1).
        *[
            ("suits", decks, {"suited_kq": 25, "suited": "2.5"}, edge)
            for decks, edge in ((8, 0.0646), (1, 0.1086))
        ],
    ],
)
def test_published_house_edges(code, decks, table, house_edge):
    sheet = special_parsheet(code, decks, parse_paytable(code, table))
    assert sheet["house_edge"] == pytest.approx(house_edge, abs=0.00005)


@pytest.mark.parametrize("code", ["21+3", "7s", "pair"])
def test_shortcuts_count_every_deal_of_every_card(code):
    """Scoring one order of P1 P2 gives the counts of the plain enumeration of every order."""
    spec = BETS[code]
    table = default_paytable(code)
    fast, total = combination_counts(spec, table, 1)
    n = len(spec.cards.value.split())

    def score(cs):
        return paid_combination(spec, hits(spec, *cs), table)

    plain, plain_total = count_deals(1, [EACH_CARD] * n, score)
    assert total == plain_total
    assert {k: v for k, v in fast.items() if v} == {k: v for k, v in plain.items() if v}


def test_lucky_aces_counts_by_card_classes_match_closed_forms():
    every = {c: 1 for c in BETS["lucky_aces"].combinations}
    counts, total = combination_counts(BETS["lucky_aces"], parse_paytable("lucky_aces", every), 2)
    shoe = 104
    assert total == shoe * 103 * 102 * 101
    assert counts["four_aces"] == 8 * 7 * 6 * 5  # any four of the eight aces, in order
    assert counts["ace_of_diamonds"] == 4 * 2 * 96 * 95 * 94  # exactly one ace, an A♦
    assert sum(counts.values()) == total  # every deal is counted once


def test_lucky_ladies_dealer_blackjack_line_matches_its_closed_form():
    table = parse_paytable("lucky_ladies", {"qh_pair_dealer_bj": 1000})
    counts, _ = combination_counts(BETS["lucky_ladies"], table, 2)
    # Q♥ Q♥ (2 x 1 orders), then an ace and one of the 30 ten-value cards left, in either order.
    assert counts["qh_pair_dealer_bj"] == 2 * 1 * 2 * 8 * 30


def test_every_default_paytable_parses_names_its_source_and_returns_less_than_staked():
    for code in BETS:
        sheet = special_parsheet(code, 8, default_paytable(code))
        assert default_source(code).strip()
        assert 0.2 < sheet["rtp"] < 1.0, code
        assert sum(r["probability"] for r in sheet["combinations"]) == pytest.approx(
            sheet["hit_frequency"]
        )


def test_dealer_bust_distribution_is_a_sub_probability():
    dist = dealer_bust_distribution(RuleSet(decks=8))
    bust = sum(dist.values())
    assert isinstance(bust, Fraction)
    assert 0.28 < bust < 0.30  # the dealer busts about 28 % of the time drawing to the end
    assert min(dist) == 3
    h17 = sum(dealer_bust_distribution(RuleSet(decks=8, dealer_hits_soft_17=True)).values())
    assert h17 > bust


def test_in_for_6_hard_6_returns_the_mean_multiplier_plus_one():
    table = parse_paytable("in_for_6", {"hard_6_mixed": [30, 60, 100]})
    row = special_parsheet("in_for_6", 8, table)["combinations"][3]
    assert row["code"] == "hard_6_mixed" and row["pays"] == [30, 60, 100]
    assert row["return"] == pytest.approx(row["probability"] * (190 / 3 + 1))


def test_command_prints_the_sheet(tmp_path, run_command):
    path = tmp_path / "table.json"
    path.write_text(json.dumps(SWEET_16))
    code, out, _ = run_command(
        "parsheet", "--bet", "sweet_16", "--decks", "8", "--paytable", str(path)
    )
    assert code == 0
    assert json.loads(out)["rtp"] == pytest.approx(0.9518072289156626)


@pytest.mark.parametrize(
    "args,line",
    [
        (["--bet", "nope", "--decks", "8"], "unknown bet 'nope'"),
        (["--bet", "21+3", "--decks", "9"], "--decks must be a whole number from 1 to 8, got '9'"),
        (["--bet", "21+3", "--decks", "0"], "--decks must be a whole number from 1 to 8, got '0'"),
        (["--bet", "21+3"], "--decks is required for a special bet"),
    ],
)
def test_command_refuses_with_one_line(args, line, run_command):
    code, out, err = run_command("parsheet", *args)
    assert (code, out, err) == (2, "", line + "\n")


@pytest.mark.parametrize(
    "table,line",
    [
        ({"royal": 5}, "paytable: 21+3 has no combination 'royal'"),
        ({"flush": -1}, "paytable: 21+3 flush must not be negative, got -1"),
    ],
)
def test_command_refuses_a_bad_paytable(table, line, tmp_path, run_command):
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    assert run_command("parsheet", "--bet", "21+3", "--decks", "8", "--paytable", str(path)) == (
        2,
        "",
        line + "\n",
    )
