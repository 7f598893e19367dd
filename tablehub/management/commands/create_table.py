"""``manage.py create_table NAME --jurisdiction CODE --config FILE``: a new table with its first
configuration version; prints the table's id (docs/operations.md, "Setting tables up by
script")."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from tablehub.models import Table
from tablehub.setup import create_table


def problems(exc: ValidationError) -> str:
    """A ValidationError as one line: each part and what is wrong with it."""
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{part}: {' '.join(msgs)}" for part, msgs in exc.message_dict.items())
    return " ".join(exc.messages)


class Command(BaseCommand):
    help = "Create a table with its first configuration; print its id."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", help="the table's name (unique)")
        parser.add_argument("--jurisdiction", required=True, help="the jurisdiction's code")
        parser.add_argument(
            "--config",
            required=True,
            help='a JSON file (or "-": stdin) with the configuration, as the API takes it: '
            "rules, limits, timers, special_bets, chips, win_thresholds",
        )
        parser.add_argument("--boxes", type=int, default=3)
        parser.add_argument("--currency", default="USD")
        parser.add_argument("--mode", choices=Table.Mode.values, default=Table.Mode.DEALER)
        parser.add_argument(
            "--shuffler", choices=Table.Shuffler.values, default=Table.Shuffler.CONTINUOUS
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["config"] == "-":
                config = json.load(sys.stdin)
            else:
                with open(options["config"], encoding="utf-8") as file:
                    config = json.load(file)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read the configuration: {exc}") from None
        try:
            table = create_table(
                options["name"],
                options["jurisdiction"],
                config,
                boxes=options["boxes"],
                currency=options["currency"],
                mode=options["mode"],
                shuffler=options["shuffler"],
            )
        except ValidationError as exc:
            raise CommandError(problems(exc)) from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(str(table.pk))
