"""Invalid scenarios: exit status 2 and exactly one line naming station, box and reason."""

import io
import json

import pytest
from django.core.management import call_command

SHOE = ["2S", "5H", "3D", "4C", "2C", "2D", "4S", "6D", "6S", "9H"]
PAYTABLES = {
    "21+3": {"straight_flush": 40, "flush": 5},
    "top_21+3": {"suited_trips": 270},
    "pair": {"suited_pair": 25, "pair": 8},
    "7s": {"777": 100, "first_7": 1},
    "bust": {"bust_3": 1, "bust_4": 2},
    "in_for_6": {"easy_6": 5, "hard_6_mixed": [30, 60, 100]},
    "kk": {"one": 1},
    "qq": {"one": 1},
    "jj": {"one": 1},
    "suits": {"suited": 3},
    "match": {"one_unsuited": 3},
    "c3": {"triplets": 50},
}
NINE_PLUS_ONE = ["21+3", "pair", "kk", "qq", "jj", "suits", "match", "c3", "in_for_6", "7s"]


def scenario(actions=None, rules=None, bets=None, credits="100", shoe=SHOE, **extra):
    station = {"credits": credits, "bets": bets or {"1": {"main": "10"}}}
    if actions is not None:
        station["actions"] = actions
    data = {"stations": {"s1": station}, "shoe": shoe} | extra
    if rules is not None:
        data["rules"] = rules
    return data


def run(data, tmp_path, raw: str | None = None) -> tuple[int, str, str]:
    path = tmp_path / "scenario.json"
    path.write_text(raw if raw is not None else json.dumps(data))
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("play_scenario", str(path), stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


CASES = {
    # unknown rules and bad rule values
    "unknown rule": (
        scenario(rules={"dealer_hits_soft17": True}),
        "rules: unknown rule 'dealer_hits_soft17'",
    ),
    "decks out of range": (
        scenario(rules={"decks": 9}),
        "rules: decks must be a whole number from 1 to 8, got 9",
    ),
    "boolean rule as string": (
        scenario(rules={"peek": "yes"}),
        "rules: peek must be true or false, got 'yes'",
    ),
    "bad blackjack payout": (
        scenario(rules={"blackjack_pays": "2:1"}),
        'rules: blackjack_pays must be one of "3:2", "6:5", "1:1", got \'2:1\'',
    ),
    "charlie too small": (
        scenario(rules={"charlie": 2}),
        "rules: charlie must be a whole number from 3 to 21, got 2",
    ),
    "unknown top-level field": (scenario(bet_limit=5), "scenario: unknown field 'bet_limit'"),
    "unknown station field": (
        {
            "stations": {"s1": {"credits": "10", "bets": {"1": {"main": "1"}}, "action": []}},
            "shoe": SHOE,
        },
        "station s1: unknown field 'action'",
    ),
    # malformed cards and shoes
    "malformed card": (
        scenario(shoe=["2S", "1X"]),
        "shoe card 2: '1X' is not a card (rank A 2-9 T J Q K or 10, then suit S H D C)",
    ),
    "too many copies": (
        scenario(rules={"decks": 1}, shoe=["2S", "5H", "2S", "4C"]),
        "shoe: 2 copies of 2S, but a 1-deck shoe holds 1",
    ),
    "shoe exhausted on a hit": (
        scenario(actions=["hit"], shoe=["2S", "5H", "3D", "4C"]),
        "station s1, box 1: the shoe ran out of cards",
    ),
    "shoe exhausted in the deal": (
        scenario(shoe=["2S", "5H"]),
        "box 1: the shoe ran out of cards during the deal",
    ),
    "shoe exhausted for the dealer": (
        scenario(actions=["stand"], shoe=["TS", "5H", "TD", "4C"]),
        "the shoe ran out of cards for the dealer",
    ),
    # actions not allowed now
    "double on three cards": (
        scenario(actions=["hit", "double"]),
        "station s1, box 1: double is not allowed on a 3-card hand",
    ),
    "split a non-pair": (
        scenario(actions=["split"]),
        "station s1, box 1: split needs two cards of the same value",
    ),
    "unknown action": (scenario(actions=["fly"]), "station s1, box 1: unknown action 'fly'"),
    "insurance when not asked": (
        scenario(actions=["insure"]),
        "station s1, box 1: insure is not allowed now: a decision (hit, stand, ...) is expected",
    ),
    "hit during insurance": (
        scenario(actions=["hit"], shoe=["2S", "AH", "3D", "4C", "9S"]),
        "station s1, box 1: hit is not allowed now: insure or no_insurance expected",
    ),
    "double_half without double for less": (
        scenario(actions=["double_half"]),
        "station s1, box 1: double_half is not allowed: the table has no double for less",
    ),
    "surrender switched off": (
        scenario(actions=["surrender"], rules={"late_surrender": False}),
        "station s1, box 1: surrender is not allowed at this table",
    ),
    # credits too low
    "stakes above credits": (
        scenario(credits="5"),
        "station s1: credits 5.00 do not cover the stakes 10.00",
    ),
    "double above credits": (
        scenario(credits="15", actions=["double"]),
        "station s1, box 1: credits 5.00 do not cover the double stake 10.00",
    ),
    "insurance above credits": (
        scenario(credits="10", actions=["insure"], shoe=["2S", "AH", "3D", "4C", "9S"]),
        "station s1, box 1: credits 0.00 do not cover the insurance stake 5.00",
    ),
    # money and bets
    "more decimals than cents": (
        scenario(bets={"1": {"main": "10.001"}}),
        "station s1, box 1: main stake has more than 2 decimal places: 10.001",
    ),
    "a stake too large for cents": (
        scenario(bets={"1": {"main": "1e30"}}),
        "station s1, box 1: main stake is too large: 1e30",
    ),
    "negative stake": (
        scenario(bets={"1": {"main": "-5"}}),
        "station s1, box 1: main stake must not be negative, got -5",
    ),
    "zero stake": (
        scenario(bets={"1": {"main": "0"}}),
        "station s1, box 1: main stake must be more than 0.00",
    ),
    "box out of range": (
        scenario(bets={"4": {"main": "10"}}),
        "station s1: there is no box '4' (the table has boxes 1 to 3)",
    ),
    "below the table minimum": (
        scenario(limits={"main": ["5", "100"]}, bets={"1": {"main": "2"}}),
        "station s1, box 1: main stake 2.00 is below the table minimum 5.00",
    ),
    # special bets: paytables and placement rules
    "special bet not offered": (
        scenario(bets={"1": {"main": "10", "21+3": "5"}}),
        "station s1, box 1: special bet '21+3' is not offered at this table",
    ),
    "unknown bet code on a box": (
        scenario(bets={"1": {"main": "10", "42": "5"}}, special_bets=PAYTABLES),
        "station s1, box 1: unknown bet code '42'",
    ),
    "unknown bet code in the paytables": (
        scenario(special_bets={"21+4": {"flush": 5}}),
        "special_bets: unknown bet code '21+4'",
    ),
    "unknown combination code": (
        scenario(special_bets={"21+3": {"royal_flush": 100}}),
        "special_bets: 21+3 has no combination 'royal_flush'",
    ),
    "negative pay": (
        scenario(special_bets={"21+3": {"flush": -5}}),
        "special_bets: 21+3 flush must not be negative, got -5",
    ),
    "hard 6 pays need three multipliers": (
        scenario(special_bets={"in_for_6": {"hard_6_mixed": 30}}),
        "special_bets: in_for_6 hard_6_mixed must be a list of three multipliers",
    ),
    "special bet without a main bet": (
        scenario(bets={"1": {"main": "10"}, "2": {"pair": "5"}}, special_bets=PAYTABLES),
        "station s1, box 2: pair needs a main bet on this box",
    ),
    "7s always needs a main bet": (
        scenario(
            rules={"special_without_main": 1},
            bets={"1": {"main": "10"}, "2": {"7s": "5"}},
            special_bets=PAYTABLES,
        ),
        "station s1, box 2: 7s needs a main bet on this box",
    ),
    "top 21+3 without 21+3": (
        scenario(bets={"1": {"main": "10", "top_21+3": "5"}}, special_bets=PAYTABLES),
        "station s1, box 1: top_21+3 needs a 21+3 bet on the same box",
    ),
    "bust above the main stakes": (
        scenario(
            bets={"1": {"main": "10"}, "2": {"main": "5", "bust": "16"}}, special_bets=PAYTABLES
        ),
        "station s1, box 2: bust stake 16.00 is above the sum of the main stakes 15.00",
    ),
    "special above its main under setting 2": (
        scenario(
            rules={"special_without_main": 2},
            bets={"1": {"main": "10", "pair": "10.01"}},
            special_bets=PAYTABLES,
        ),
        "station s1, box 1: pair stake 10.01 is above the main stake 10.00 of its box",
    ),
    "more than nine special bets on a box": (
        scenario(
            bets={"1": {"main": "10"} | {code: "1" for code in NINE_PLUS_ONE}},
            special_bets={code: PAYTABLES[code] for code in NINE_PLUS_ONE},
            credits="1000",
        ),
        "station s1, box 1: at most 9 special bets per box",
    ),
    "special below its table minimum": (
        scenario(
            limits={"special": ["2", "25"]},
            bets={"1": {"main": "10", "pair": "1"}},
            special_bets=PAYTABLES,
        ),
        "station s1, box 1: pair stake 1.00 is below the table minimum 2.00",
    ),
    "bonus for an unknown station": (
        scenario(special_bets=PAYTABLES, bonus={"s9": {"1": 300}}),
        "bonus: unknown station 's9'",
    ),
    "bonus value not in the hard 6 list": (
        scenario(
            bets={"1": {"main": "10", "in_for_6": "5"}},
            special_bets=PAYTABLES,
            bonus={"s1": {"1": 999}},
            shoe=["3S", "5H", "3H", "4C", "2C"],
        ),
        "station s1, box 1: bonus 999 is not one of this hard 6's multipliers 30, 60, 100",
    ),
    "no bets at all": (
        {"stations": {"s1": {"credits": "10"}}, "shoe": SHOE},
        "no station has a bet",
    ),
}


@pytest.mark.parametrize("data,line", CASES.values(), ids=CASES.keys())
def test_invalid_scenario_exits_2_with_one_line(data, line, tmp_path) -> None:
    code, out, err = run(data, tmp_path)
    assert code == 2
    assert out == ""
    assert err == line + "\n"


def test_malformed_json(tmp_path) -> None:
    code, out, err = run(None, tmp_path, raw='{"stations": ')
    assert code == 2 and out == ""
    assert err.endswith("not valid JSON (Expecting value at line 1 column 14)\n")
    assert err.count("\n") == 1


def test_missing_file(tmp_path) -> None:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("play_scenario", str(tmp_path / "nope.json"), stdout=out, stderr=err)
    assert exc.value.code == 2
    assert "cannot read the scenario" in err.getvalue()


def test_float_money_is_read_exactly(tmp_path) -> None:
    raw = json.dumps(scenario(actions=["stand"])).replace('"100"', "100.10")
    code, out, _ = run(None, tmp_path, raw=raw)
    assert code == 0
    # 2S 3D stands on 5; the dealer's 5H 4C draws 2C 2D 4S to 17: the hand loses its 10.
    assert json.loads(out)["stations"]["s1"]["credits"] == "90.10"
