"""Invalid seat-mode scenarios (docs/scenarios.md, "Seat mode and bets behind"): exit status 2
and exactly one line naming station, box and reason; nothing is played."""

from __future__ import annotations

import pytest

from tests.engine.test_invalid_scenarios import SHOE, run


def seated(stations=None, **extra):
    data = {
        "mode": "seat",
        "boxes": 3,
        "stations": stations
        or {
            "a": {"seat": 1, "credits": "100", "bets": {"1": {"main": "10"}}},
            "b": {"credits": "100", "behind": {"1": {"main": "5"}}},
        },
        "shoe": SHOE,
    }
    return data | extra


A = {"seat": 1, "credits": "100", "bets": {"1": {"main": "10"}}}

CASES = {
    "unknown mode": (
        seated(mode="stadium"),
        'mode must be "common_draw" or "seat", got \'stadium\'',
    ),
    "too many seats": (seated(boxes=8), "a seat-mode table has 1 to 7 seats, got 8"),
    "behind without seat mode": (
        {"behind": {"cap": "5"}, "stations": {"a": {"credits": "1"}}, "shoe": SHOE},
        'behind: bets behind a seat need "mode": "seat"',
    ),
    "seat taken twice": (
        seated({"a": A, "b": {"seat": 1, "credits": "100"}}),
        "station b, box 1: seat 1 is taken by a",
    ),
    "seat out of range": (
        seated({"a": {"seat": 4, "credits": "100"}}),
        "station a: seat must be a seat from 1 to 3, got 4",
    ),
    "bets on another seat": (
        seated({"a": A, "b": {"seat": 2, "credits": "100", "bets": {"1": {"main": "5"}}}}),
        "station b: bets: a station bets on its own seat only (behind: for another seat), "
        "not on seat 1",
    ),
    "behind its own seat": (
        seated({"a": A | {"behind": {"1": {"main": "5"}}}}),
        "station a: behind: seat 1 is the station's own seat",
    ),
    "behind an empty seat": (
        seated({"a": A, "b": {"credits": "100", "behind": {"2": {"main": "5"}}}}),
        "station b, box 2: seat 2 is empty: nobody sits there",
    ),
    "behind a seat without its main bet": (
        seated(
            {
                "a": {"seat": 1, "credits": "100"},
                "b": {"credits": "9", "behind": {"1": {"main": "5"}}},
            }
        ),
        "station b, box 1: seat 1 has no main bet to bet behind",
    ),
    "special bet behind not allowed": (
        seated(
            {"a": A, "b": {"credits": "100", "behind": {"1": {"main": "5", "21+3": "1"}}}},
            special_bets={"21+3": {"flush": 5}},
        ),
        "station b, box 1: 21+3 may not be bet behind a seat here",
    ),
    "behind above the cap": (
        seated(
            {
                "a": A,
                "b": {"credits": "100", "behind": {"1": {"main": "5"}}},
                "c": {"credits": "100", "behind": {"1": {"main": "6"}}},
            },
            behind={"cap": "10"},
        ),
        "box 1: the stakes behind seat 1 come to 11.00, above the cap 10.00",
    ),
    "unknown behind rule": (seated(behind={"max": "10"}), "behind: unknown field 'max'"),
    "follow not a boolean": (
        seated({"a": A, "b": {"credits": "100", "behind": {"1": {"main": "5"}}, "follow": 1}}),
        "station b: follow must be true or false, got 1",
    ),
    "leave without a seat": (
        seated({"a": A, "b": {"credits": "1", "actions": ["leave"]}}),
        'station b: "leave" is for a seated station only',
    ),
    "leave not last": (
        seated({"a": A | {"actions": ["leave", "hit"]}}),
        'station a: "leave" must be the last action: the player has gone',
    ),
    "seat field at a common-draw table": (
        {"stations": {"a": A}, "shoe": SHOE},
        "station a: unknown field 'seat'",
    ),
}


@pytest.mark.parametrize("data,line", CASES.values(), ids=CASES.keys())
def test_invalid_seat_scenario_exits_2_with_one_line(data, line, tmp_path) -> None:
    code, out, err = run(data, tmp_path)
    assert code == 2
    assert out == ""
    assert err == line + "\n"
