"""Par sheets for the admin, the configuration checks, the API and the reports, cached.

A special bet's exact par sheet takes up to a few tenths of a second (payouts/specials/
parsheet.py); a table offers up to 9 of them, and the admin shows them on every page, so
each sheet is kept in this process (an LRU) and in Django's cache, keyed by what it depends
on: the bet, the paytable, the deck count and, for ``bust`` only, the dealer's rules.

The main game's exact par sheet takes seconds for a new rule set; it is kept on disk by
payouts/maingame/cache.py. ``main_sheet(rules, compute=False)`` answers only from that
disk cache, so a page never waits for it; ``warm_main_sheet`` computes it off the request.

With a broker, ``warm_main_sheet`` sends the Celery task ``MAIN_PARSHEET_TASK`` by its name
(payouts/tasks.py defines it under that name): a service does not import the tasks, which
sit above the services and import them (the layers in pyproject.toml).
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import lru_cache
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import cache

from payouts.maingame.cache import cache_path, cached_main_parsheet
from payouts.specials import BETS, Cards, parse_paytable
from payouts.specials.parsheet import special_parsheet
from rounds.engine import RuleSet

CACHE_VERSION = 1
MAIN_PARSHEET_TASK = "payouts.tasks.compute_main_parsheet"


def _key(code: str, pays: Any, rules: RuleSet) -> str:
    depends = {"v": CACHE_VERSION, "bet": code, "pays": pays, "decks": rules.decks}
    if BETS[code].cards is Cards.DEALER_FINAL:  # bust reads how the dealer plays
        depends["rules"] = rules.to_dict()
    digest = hashlib.sha256(json.dumps(depends, sort_keys=True, default=str).encode())
    return "parsheet:" + digest.hexdigest()[:32]


@lru_cache(maxsize=512)
def _sheet(key: str, code: str, pays_json: str, rules_json: str) -> dict[str, Any]:
    found = cache.get(key)
    if found is not None:
        return found
    rules = RuleSet.from_dict(json.loads(rules_json))
    table = parse_paytable(code, json.loads(pays_json), where="paytable")
    sheet = special_parsheet(code, rules.decks, table, rules)
    cache.set(key, sheet, timeout=None)
    return sheet


def special_sheet(code: str, pays: Any, rules: RuleSet) -> dict[str, Any]:
    """The par sheet of one special bet with a paytable (combination -> pays) under a rule
    set (its decks; bust also the dealer's rules). EngineError for a bad paytable."""
    parse_paytable(code, pays, where="paytable")  # refuse before caching anything
    pays_json = json.dumps(pays, sort_keys=True, default=str)
    rules_json = json.dumps(rules.to_dict(), sort_keys=True)
    return _sheet(_key(code, pays, rules), code, pays_json, rules_json)


def main_sheet(rules: RuleSet, compute: bool = True) -> dict[str, Any] | None:
    """The main game's par sheet; with ``compute=False`` None unless it is already on disk."""
    if not compute and not cache_path(rules).exists():
        return None
    return cached_main_parsheet(rules)


_warming: set[str] = set()
_warming_lock = threading.Lock()


def warm_main_sheet(rules: RuleSet) -> None:
    """Compute the main game's par sheet in the background, unless it is on disk already:
    a Celery task with a broker, a thread of this process on the embedded default."""
    if cache_path(rules).exists() or not getattr(settings, "TABLEHUB_WARM_PARSHEETS", True):
        return
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        current_app.send_task(MAIN_PARSHEET_TASK, args=(rules.to_dict(),))
        return
    key = str(cache_path(rules))
    with _warming_lock:
        if key in _warming:
            return
        _warming.add(key)

    def run() -> None:
        try:
            cached_main_parsheet(rules)
        finally:
            with _warming_lock:
                _warming.discard(key)

    threading.Thread(target=run, name="main-parsheet", daemon=True).start()
