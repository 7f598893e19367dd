"""``manage.py parsheet --bet CODE --decks N [--paytable FILE] [--rules FILE]`` (spec/parsheet.md).

Prints the par sheet JSON; exit status 2 with one line on stderr for an
unknown bet, a bad deck count, a bad paytable or rules file.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand

from payouts.maingame.cache import cached_main_parsheet
from payouts.specials import BETS, parse_paytable
from payouts.specials.defaults import default_paytable
from payouts.specials.parsheet import special_parsheet
from rounds.engine import EngineError, RuleSet
from rounds.scenario_file import EXIT_INVALID, read_scenario


def parse_decks(value: str | None) -> int | None:
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= 8:
        raise EngineError(f"--decks must be a whole number from 1 to 8, got {value!r}")
    return int(value)


def build_parsheet(
    bet: str | None, decks_arg: str | None, paytable_file: str | None, rules_file: str | None
) -> dict[str, Any]:
    """The par sheet for the command's arguments; EngineError for anything invalid."""
    decks = parse_decks(decks_arg)
    rules = RuleSet.from_dict(read_scenario(rules_file, sys.stdin)) if rules_file else None
    if not bet:
        raise EngineError("--bet is required: a bet code from special-bets.md, or main")
    if bet == "main":
        if rules is None:
            raise EngineError("--rules is required for the main game: a scenario rules file")
        if decks is not None and decks != rules.decks:
            raise EngineError(f"--decks {decks} and the rules' decks {rules.decks} disagree")
        return cached_main_parsheet(rules)
    if bet not in BETS:
        raise EngineError(f"unknown bet {bet!r}")
    if decks is None:
        raise EngineError("--decks is required for a special bet")
    if paytable_file:
        table = parse_paytable(bet, read_scenario(paytable_file, sys.stdin), where="paytable")
    else:
        table = default_paytable(bet)
    return special_parsheet(bet, decks, table, rules)


class Command(BaseCommand):
    help = "Print the par sheet of a special bet or of the main game (spec/parsheet.md)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--bet", help="bet code from special-bets.md")
        parser.add_argument("--decks", help="decks in the shoe, 1 to 8")
        parser.add_argument("--paytable", help="JSON file: combination -> pays N to 1")
        parser.add_argument("--rules", help="JSON file of scenario rules")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            sheet = build_parsheet(
                options["bet"], options["decks"], options["paytable"], options["rules"]
            )
        except EngineError as exc:
            self.stderr.write(exc.line())
            sys.exit(EXIT_INVALID)
        self.stdout.write(json.dumps(sheet, indent=2))
