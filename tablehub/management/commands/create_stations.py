"""``manage.py create_stations TABLE --count N`` (or ``--names a b c``): new stations with
generated credentials, printed once as ``name<TAB>credential`` lines; only their hashes are
stored (docs/operations.md, "Setting tables up by script")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from tablehub.models import Table
from tablehub.setup import create_stations, station_names


class Command(BaseCommand):
    help = "Create stations at a table; print each one's credential once."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("table", type=int, help="the table's id")
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--count", type=int, help="this many stations, named <prefix><n>")
        which.add_argument("--names", nargs="+", help="stations with these names")
        parser.add_argument("--prefix", default="s", help="with --count (default: s)")

    def handle(self, *args: Any, **options: Any) -> None:
        table = Table.objects.filter(pk=options["table"]).first()
        if table is None:
            raise CommandError(f"no table {options['table']}")
        if options["count"] is not None and options["count"] < 1:
            raise CommandError("--count must be at least 1")
        names = options["names"] or station_names(options["prefix"], options["count"], table)
        try:
            credentials = create_stations(table, names)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for name, credential in credentials.items():
            self.stdout.write(f"{name}\t{credential}")
