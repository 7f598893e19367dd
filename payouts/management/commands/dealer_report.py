"""``manage.py dealer_report (--shift NAME [--date D] | --start T --end T) [--dealer U]
[--table T] [--no-keep]``: the statistics per dealer and shift (payouts/dealer_stats.py,
docs/integrity.md) as JSON, kept for the admin's list (outliers flagged) unless
``--no-keep``. Exit status 2 with one line for bad input; 0 otherwise, outliers or not (the
rows say which)."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from payouts import dealer_stats
from tablehub.models import Table


def _moment(text: str, name: str) -> datetime:
    """A date and time (or a date: its midnight), in the server's time zone when naive."""
    try:
        moment = parse_datetime(text) or datetime.combine(
            date.fromisoformat(text), datetime.min.time()
        )
    except ValueError:
        moment = None
    if moment is None:
        raise CommandError(
            f"--{name} must be a date or a date and time, got {text!r}", returncode=2
        )
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment)


class Command(BaseCommand):
    help = "Statistics per dealer and shift: hands, busts, blackjacks, rank chi-square, hold z."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--shift", help="a shift of TABLEHUB_SHIFTS (e.g. day, swing, night)")
        parser.add_argument("--date", help="the day the shift starts (default: today)")
        parser.add_argument("--start", help="the range's start (instead of a shift)")
        parser.add_argument("--end", help="the range's end, excluded")
        parser.add_argument("--dealer", action="append", help="a dealer's username (repeatable)")
        parser.add_argument("--table", action="append", help="a table's name or id (repeatable)")
        parser.add_argument("--no-keep", action="store_true", help="print only; keep no rows")

    def handle(self, *args: Any, **options: Any) -> None:
        shift = options["shift"] or ""
        if shift:
            if options["start"] or options["end"]:
                raise CommandError("give --shift or --start and --end, not both", returncode=2)
            try:
                day = date.fromisoformat(options["date"]) if options["date"] else None
                start, end = dealer_stats.shift_range(shift, day or timezone.localdate())
            except ValueError as exc:  # a bad --date, or dealer_stats.UnknownShift
                raise CommandError(str(exc), returncode=2) from None
        elif options["start"] and options["end"]:
            start, end = _moment(options["start"], "start"), _moment(options["end"], "end")
        else:
            raise CommandError("give --shift NAME, or --start and --end", returncode=2)
        if start >= end:
            raise CommandError("the start must be before the end", returncode=2)
        report = dealer_stats.dealer_report(
            start, end, self._dealers(options["dealer"]), self._tables(options["table"])
        )
        report["shift"] = shift or None
        if not options["no_keep"]:
            dealer_stats.keep(report, shift)
        self.stdout.write(json.dumps(report, indent=2))

    def _dealers(self, names: list[str] | None) -> list[int] | None:
        if not names:
            return None
        users = dict(
            get_user_model().objects.filter(username__in=names).values_list("username", "pk")
        )
        unknown = [name for name in names if name not in users]
        if unknown:
            raise CommandError(f"no user {unknown[0]!r}", returncode=2)
        return list(users.values())

    def _tables(self, names: list[str] | None) -> list[int] | None:
        if not names:
            return None
        ids = []
        for name in names:
            table = Table.objects.filter(name=name).first()
            if table is None and name.isdigit():
                table = Table.objects.filter(pk=int(name)).first()
            if table is None:
                raise CommandError(f"no table {name!r}", returncode=2)
            ids.append(table.pk)
        return ids
