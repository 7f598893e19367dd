"""The default paytable of each special bet, read from the shipped fixture (no database)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from .paytable import Paytable, parse_paytable

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "default_paytables.json"


@cache
def default_paytable_rows() -> dict[str, dict]:
    """Each bet code's default paytable row of the fixture (its pays, name and source)."""
    rows = json.loads(FIXTURE.read_text())
    return {r["fields"]["bet_code"]: r["fields"] for r in rows if r["fields"]["is_default"]}


def default_paytable(code: str) -> Paytable:
    return parse_paytable(code, default_paytable_rows()[code]["pays"], where="default paytable")


def default_source(code: str) -> str:
    return default_paytable_rows()[code]["source"]
