"""``manage.py set_reader_key TABLE``: a new card reader key for the table, printed once (or
``--stdin``: the key read from stdin, printed nowhere); only its hash is stored
(docs/operations.md, "Setting tables up by script")."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from tablehub.models import Table
from tablehub.setup import set_reader_key


class Command(BaseCommand):
    help = "Set a table's card reader key (a new random one, printed once)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("table", type=int, help="the table's id")
        parser.add_argument(
            "--stdin", action="store_true", help="read the key from stdin instead of making one"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        table = Table.objects.filter(pk=options["table"]).first()
        if table is None:
            raise CommandError(f"no table {options['table']}")
        key = sys.stdin.readline().strip() if options["stdin"] else None
        try:
            made = set_reader_key(table, key)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if key is None:
            self.stdout.write(made)
