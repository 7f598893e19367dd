"""``manage.py verify_log [--table T] [--since DATE]``: recompute every table's hash chains
(rounds/chain.py, docs/integrity.md); exit 1 naming the first row that breaks each broken
chain and the kind of break (changed, missing, reordered, added), 0 when they all verify."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.dateparse import parse_date, parse_datetime

from rounds import chain
from rounds.models import ChainHead
from tablehub.models import Table


def _since(text: str) -> datetime:
    moment = parse_datetime(text)
    if moment is None:
        day = parse_date(text)
        if day is None:
            raise CommandError(f"--since {text!r} is not a date (YYYY-MM-DD) or a date and time")
        moment = datetime.combine(day, time(0))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = "Verify the tamper-evident log: every table's event and ledger hash chains."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--table", help="a table's id or name (default: every table)")
        parser.add_argument("--since", help="only rows written from this date (UTC) on")

    def handle(self, *args: Any, **options: Any) -> None:
        since = _since(options["since"]) if options["since"] else None
        if options["table"]:
            name = options["table"]
            table = Table.objects.filter(name=name).first()
            if table is None and name.isdigit():
                table = Table.objects.filter(pk=int(name)).first()
            if table is None:
                raise CommandError(f"no table {name!r}")
            tables = [table.pk]
        else:
            tables = sorted(
                set(Table.objects.values_list("pk", flat=True))
                | set(ChainHead.objects.values_list("table_id", flat=True))
            )
        breaks = chain.verify(tables, since)
        for found in breaks:
            self.stderr.write(found.line())
        if breaks:
            raise CommandError(f"the log is broken: {len(breaks)} chain(s)", returncode=1)
        self.stdout.write(f"the log verifies: {len(tables)} table(s), {2 * len(tables)} chains")
