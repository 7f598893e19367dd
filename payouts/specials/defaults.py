"""The default paytable of each special bet, read from the shipped fixture (no database)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from .paytable import Paytable, parse_paytable

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "default_paytables.json"


@cache
def _defaults() -> dict[str, dict]:
    rows = json.loads(FIXTURE.read_text())
    return {r["fields"]["bet_code"]: r["fields"] for r in rows if r["fields"]["is_default"]}


def default_paytable(code: str) -> Paytable:
    return parse_paytable(code, _defaults()[code]["pays"], where="default paytable")


def default_source(code: str) -> str:
    return _defaults()[code]["source"]
