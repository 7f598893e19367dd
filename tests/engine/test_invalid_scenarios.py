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
# box 1 gets 8S 8D (a pair), the dealer 5H up and 4C in the hole; then 3C 2D ...
PAIR_SHOE = ["8S", "5H", "8D", "4C", "3C", "2D", "4S", "6D", "6S", "9H"]
# the same, but the first split hand draws a third 8
THREE_EIGHTS = ["8S", "5H", "8D", "4C", "8C", "2D", "4S", "6D", "6S", "9H"]
# box 1 gets 2S 3D against the dealer's ace up
ACE_UP = ["2S", "AH", "3D", "4C", "9S", "TD", "TC"]
NINE_PLUS_ONE = ["21+3", "pair", "kk", "qq", "jj", "suits", "match", "c3", "in_for_6", "7s"]


def scenario(actions=None, rules=None, bets=None, credits="100", shoe=SHOE, **extra):
    station = {"credits": credits, "bets": bets or {"1": {"main": "10"}}}
    if actions is not None:
        station["actions"] = actions
    data = {"stations": {"s1": station}, "shoe": shoe} | extra
    if rules is not None:
        data["rules"] = rules
    return data


def run(data, tmp_path, raw: str | None = None) -> tuple[int | str | None, str, str]:
    path = tmp_path / "scenario.json"
    path.write_text(raw if raw is not None else json.dumps(data))
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("play_scenario", str(path), stdout=out, stderr=err)
        code: int | str | None = 0
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
    "bad double_on": (
        scenario(rules={"double_on": "8-11"}),
        'rules: double_on must be one of "any", "9-11", "10-11", got \'8-11\'',
    ),
    "bad auto_stand": (
        scenario(rules={"auto_stand": "soft21"}),
        'rules: auto_stand must be one of "hard21", "21", got \'soft21\'',
    ),
    "bad timeout_action": (
        scenario(rules={"timeout_action": "hit"}),
        'rules: timeout_action must be one of "stand", "hit_soft", got \'hit\'',
    ),
    "max_splits out of range": (
        scenario(rules={"max_splits": 8}),
        "rules: max_splits must be a whole number from 0 to 7, got 8",
    ),
    "special_without_main out of range": (
        scenario(rules={"special_without_main": 3}),
        "rules: special_without_main must be a whole number from 0 to 2, got 3",
    ),
    "boolean rule as null": (
        scenario(rules={"peek": None}),
        "rules: peek must be true or false, got null",
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
    "null card": (
        scenario(shoe=["2S", None]),
        "shoe card 2: null is not a card (rank A 2-9 T J Q K or 10, then suit S H D C)",
    ),
    "malformed card": (
        scenario(shoe=["2S", "1X"]),
        "shoe card 2: '1X' is not a card (rank A 2-9 T J Q K or 10, then suit S H D C)",
    ),
    "lower-case card": (  # the spec writes suits S H D C, ranks T J Q K A
        scenario(shoe=["2S", "th"]),
        "shoe card 2: 'th' is not a card (rank A 2-9 T J Q K or 10, then suit S H D C)",
    ),
    "card with spaces": (
        scenario(shoe=["2S", " 9C"]),
        "shoe card 2: ' 9C' is not a card (rank A 2-9 T J Q K or 10, then suit S H D C)",
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
        "station s1, box 1: the shoe ran out of cards during the deal",
    ),
    "shoe exhausted in the deal of a shared box": (
        {
            "stations": {
                "s1": {"credits": "10", "bets": {"1": {"main": "1"}}},
                "s3": {"credits": "10", "bets": {"2": {"main": "1"}}},
                "s2": {"credits": "10", "bets": {"2": {"main": "1"}}},
            },
            "shoe": ["2S"],
        },
        "station s3, box 2: the shoe ran out of cards during the deal",
    ),
    "shoe exhausted on a double": (
        scenario(actions=["double"], shoe=["2S", "5H", "3D", "4C"]),
        "station s1, box 1: the shoe ran out of cards",
    ),
    "shoe exhausted while burning": (
        scenario(burn=3, shoe=["2S", "5H"]),
        "the shoe ran out of cards while burning",
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
    "double outside 9-11": (
        scenario(actions=["double"], rules={"double_on": "9-11"}),
        "station s1, box 1: double is allowed only on a hard 9, 10 or 11",
    ),
    "double outside 10-11": (
        scenario(
            actions=["double"],
            rules={"double_on": "10-11"},
            shoe=["4S", "5H", "5D", "4C", "3C", "2D", "4S", "6D", "6S", "9H"],
        ),
        "station s1, box 1: double is allowed only on a hard 10 or 11",
    ),
    "double after split switched off": (
        scenario(actions=["split", "double"], rules={"double_after_split": False}, shoe=PAIR_SHOE),
        "station s1, box 1: double after split is not allowed",
    ),
    "split beyond max_splits": (
        scenario(actions=["split", "split"], rules={"max_splits": 1}, shoe=THREE_EIGHTS),
        "station s1, box 1: no more splits on this box (at most 1)",
    ),
    "surrender after a hit": (
        scenario(actions=["hit", "surrender"]),
        "station s1, box 1: surrender is not allowed on a 3-card hand",
    ),
    "surrender after a split": (
        scenario(actions=["split", "surrender"], shoe=PAIR_SHOE),
        "station s1, box 1: surrender after split is not allowed",
    ),
    "even money without a blackjack": (
        scenario(actions=["even_money"], shoe=ACE_UP),
        "station s1, box 1: even_money is not allowed now: insure or no_insurance expected",
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
    "split above credits": (
        scenario(credits="15", actions=["split"], shoe=PAIR_SHOE),
        "station s1, box 1: credits 5.00 do not cover the split stake 10.00",
    ),
    "double_half above credits": (
        scenario(credits="14", actions=["double_half"], rules={"double_for_less": True}),
        "station s1, box 1: credits 4.00 do not cover the double stake 5.00",
    ),
    # money and bets
    "credits as a JSON boolean": (
        scenario(credits=True),
        'station s1: credits must be a decimal string such as "10.00", got true',
    ),
    "more decimals than cents": (
        scenario(bets={"1": {"main": "10.001"}}),
        "station s1, box 1: main stake has more than 2 decimal places: 10.001",
    ),
    "a stake too large for cents": (
        scenario(bets={"1": {"main": "1" + "0" * 30}}),
        f"station s1, box 1: main stake is too large: 1{'0' * 30}",
    ),
    "a stake in exponent notation": (  # money is a decimal string: digits, maybe a point
        scenario(bets={"1": {"main": "1e1"}}),
        "station s1, box 1: main stake must be a decimal string such as \"10.00\", got '1e1'",
    ),
    "a stake with an underscore": (
        scenario(bets={"1": {"main": "1_0"}}),
        "station s1, box 1: main stake must be a decimal string such as \"10.00\", got '1_0'",
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
    "above the table maximum": (
        scenario(limits={"main": ["1", "5"]}),
        "station s1, box 1: main stake 10.00 is above the table maximum 5.00",
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
    "special above its table maximum": (
        scenario(
            limits={"special": ["1", "4"]},
            bets={"1": {"main": "10", "pair": "5"}},
            special_bets=PAYTABLES,
        ),
        "station s1, box 1: pair stake 5.00 is above the table maximum 4.00",
    ),
    "bust without a main bet on its box": (
        scenario(bets={"1": {"main": "10"}, "2": {"bust": "5"}}, special_bets=PAYTABLES),
        "station s1, box 2: bust needs a main bet on this box",
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


# Values that json.dumps cannot write from Python: (scenario with "@" for the value, raw JSON
# value, line). The line shows the value as the JSON wrote it, not its Python spelling.
RAW_CASES = {
    "decks as a JSON float": (
        scenario(rules={"decks": "@"}),
        "8.0",
        "rules: decks must be a whole number from 1 to 8, got 8.0",
    ),
    "boxes as a JSON float": (
        scenario(boxes="@"),
        "2.5",
        "boxes must be a whole number from 1 to 9, got 2.5",
    ),
    "bonus as a JSON boolean": (
        scenario(special_bets=PAYTABLES, bonus={"s1": {"1": "@"}}),
        "false",
        "station s1, box 1: bonus multiplier must be a number, got false",
    ),
}


@pytest.mark.parametrize("data,value,line", RAW_CASES.values(), ids=RAW_CASES.keys())
def test_invalid_value_is_shown_as_written(data, value, line, tmp_path) -> None:
    code, out, err = run(None, tmp_path, raw=json.dumps(data).replace('"@"', value))
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
