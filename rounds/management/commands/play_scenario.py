"""``manage.py play_scenario FILE``: play one scenario file through the rules engine.

Exit status 0 with the outcome JSON on stdout; exit status 2 with one line on
stderr when the scenario is invalid (spec/scenario-format.md).
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from typing import Any, TextIO

from django.core.management.base import BaseCommand

from rounds.engine import EngineError, play_scenario

EXIT_INVALID = 2


def read_scenario(path: str, stdin: TextIO) -> Any:
    """Decode a scenario file (or stdin for "-"); floats are read as exact Decimals."""
    try:
        if path == "-":
            text = stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as exc:
        raise EngineError(f"{path}: cannot read the scenario ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise EngineError(f"{path}: the scenario is not UTF-8 text") from None
    try:
        return json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise EngineError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except RecursionError:
        raise EngineError(f"{path}: the JSON is nested too deeply") from None


class Command(BaseCommand):
    help = "Play a scenario file (spec/scenario-format.md) through the rules engine."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", help='scenario JSON file, or "-" for stdin')
        parser.add_argument(
            "--live",
            action="store_true",
            help="play it through the real table: server, websockets, database and ledger",
        )
        parser.add_argument("--url", help="with --live: a running server, e.g. ws://127.0.0.1:8000")
        parser.add_argument("--timer-ms", type=int, help="with --live: every timer, shortened")
        parser.add_argument(
            "--keep", action="store_true", help="with --live: keep the table for game recall"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            data = read_scenario(options["file"], sys.stdin)
            if options["live"]:
                from rounds.live_replay import play_live

                outcome = play_live(data, options["url"], options["timer_ms"], options["keep"])
            else:
                outcome = play_scenario(data)
        except EngineError as exc:
            self.stderr.write(exc.line())
            sys.exit(EXIT_INVALID)
        self.stdout.write(json.dumps(outcome, indent=2))
