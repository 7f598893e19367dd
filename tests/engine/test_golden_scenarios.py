"""Every golden round in tests/scenarios/ played through ``manage.py play_scenario``.

Each ``NAME.json`` has its expected outcome in ``NAME.expected.json``, worked
out by hand from spec/scenario-format.md; the comparison is exact, to the cent.
"""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
GOLDEN = sorted(p for p in SCENARIOS.glob("*.json") if not p.name.endswith(".expected.json"))


def play(path: Path) -> dict:
    out = io.StringIO()
    call_command("play_scenario", str(path), stdout=out)
    return json.loads(out.getvalue())


def test_there_are_enough_golden_rounds() -> None:
    assert len(GOLDEN) >= 60


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_round(path: Path) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    assert play(path) == expected
