"""What the golden rounds (tests/scenarios/) must cover, checked from their expected outputs:
every combination code of every special bet paid at least once, and enough rounds with
special bets. A combination that no golden round pays is a line of a paytable no test
has settled."""

from __future__ import annotations

import json
from pathlib import Path

from payouts.specials.catalog import BETS

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def paid_combinations() -> set[tuple[str, str]]:
    paid = set()
    for path in SCENARIOS.glob("*.expected.json"):
        for station in json.loads(path.read_text())["stations"].values():
            for entry in station.get("special", []):
                if entry["combination"] is not None:
                    paid.add((entry["bet"], entry["combination"]))
    return paid


def test_every_combination_of_every_special_bet_is_paid_by_a_golden_round() -> None:
    paid = paid_combinations()
    missing = [
        (code, combination)
        for code, spec in BETS.items()
        for combination in spec.combinations
        if (code, combination) not in paid
    ]
    assert missing == []


def test_at_least_80_golden_rounds_settle_special_bets() -> None:
    with_specials = [
        path
        for path in SCENARIOS.glob("*.expected.json")
        if any(s.get("special") for s in json.loads(path.read_text())["stations"].values())
    ]
    assert len(with_specials) >= 80
