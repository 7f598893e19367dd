"""Main-game par sheets kept on disk, one file per rule set, so a rule set computed once
answers at once afterwards (the command, the admin and every server process share them)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from rounds.engine.rules import RuleSet

from .parsheet import main_parsheet

# Bump when the analysis changes its results (2: exact draws after a peek; 3: a pair's own
# first play in the chart).
CACHE_VERSION = 3


def cache_dir() -> Path:
    default = Path(__file__).resolve().parents[2] / ".cache" / "parsheets"
    return Path(os.environ.get("TABLEHUB_PARSHEET_CACHE", default))


def cache_path(rules: RuleSet) -> Path:
    key = json.dumps({"v": CACHE_VERSION, "rules": rules.to_dict()}, sort_keys=True)
    return cache_dir() / f"main-{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def cached_main_parsheet(rules: RuleSet) -> dict[str, Any]:
    path = cache_path(rules)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    sheet = main_parsheet(rules)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(sheet))
    tmp.replace(path)  # atomic: a reader never sees half a file
    return sheet
