"""Setting a table up by script (``manage.py create_table``, ``create_stations``,
``set_reader_key``; docs/operations.md, "Setting tables up by script").

Secrets are made here with ``secrets`` and stored only as hashes (tablehub/tokens.py): the
caller prints them once, and nobody can read them back. Each function changes nothing when
it refuses (a ValidationError or a ValueError saying why).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from django.db import transaction

from stations.models import Station
from tablehub.configuration import save_version
from tablehub.models import Jurisdiction, Table

STATION_NAME = re.compile(r"[-a-zA-Z0-9_]{1,40}")  # a SlugField of 40
MAX_STATIONS = 1000  # in one call: a stadium's worth


def new_secret() -> str:
    """A credential or reader key: 32 random bytes, URL-safe (it goes in a URL fragment)."""
    return secrets.token_urlsafe(32)


@transaction.atomic
def create_table(
    name: str,
    jurisdiction: str,
    config: dict[str, Any],
    boxes: int = 3,
    currency: str = "USD",
    mode: str = Table.Mode.DEALER,
    shuffler: str = Table.Shuffler.CONTINUOUS,
) -> Table:
    """A new table under the jurisdiction with code ``jurisdiction`` and its first
    configuration version ``config`` (checked as the admin and the API check one). The table
    is closed: open it from the croupier tablet."""
    found = Jurisdiction.objects.filter(code=jurisdiction).first()
    if found is None:
        raise ValueError(f"no jurisdiction with code {jurisdiction!r}")
    if Table.objects.filter(name=name).exists():
        raise ValueError(f"a table named {name!r} exists already")
    table = Table(
        name=name,
        jurisdiction=found,
        boxes=boxes,
        currency=currency,
        mode=mode,
        shuffler=shuffler,
    )
    table.full_clean()
    table.save()
    save_version(table, config)  # ValidationError: the whole table is rolled back
    return table


@transaction.atomic
def create_stations(table: Table, names: list[str]) -> dict[str, str]:
    """New stations at ``table``, each with a fresh credential: name -> credential, to be
    handed to the terminals now (only the hashes are stored)."""
    if not names:
        raise ValueError("no station names")
    if len(names) > MAX_STATIONS:
        raise ValueError(f"at most {MAX_STATIONS} stations at once, got {len(names)}")
    if len(set(names)) != len(names):
        raise ValueError("a station name is given twice")
    bad = [n for n in names if not STATION_NAME.fullmatch(n)]
    if bad:
        raise ValueError(f"{bad[0]!r} is not a station name (letters, digits, - and _; 1 to 40)")
    taken = set(Station.objects.filter(table=table, name__in=names).values_list("name", flat=True))
    if taken:
        raise ValueError(f"table {table.pk} has stations {', '.join(sorted(taken))} already")
    credentials = {name: new_secret() for name in names}
    stations = []
    for name, credential in credentials.items():
        station = Station(table=table, name=name)
        station.set_credential(credential)
        stations.append(station)
    Station.objects.bulk_create(stations)
    return credentials


def station_names(prefix: str, count: int, table: Table) -> list[str]:
    """``count`` names ``<prefix><n>`` numbered on from the table's highest with that
    prefix (s1, s2, ... then s3 next time)."""
    pattern = re.compile(re.escape(prefix) + r"([0-9]+)")
    numbers = [
        int(match.group(1))
        for name in Station.objects.filter(table=table).values_list("name", flat=True)
        if (match := pattern.fullmatch(name))
    ]
    start = max(numbers, default=0) + 1
    return [f"{prefix}{n}" for n in range(start, start + count)]


def set_reader_key(table: Table, key: str | None = None) -> str:
    """The table's card reader key becomes ``key`` (a new random one when None); returns
    it. The old key stops working at once."""
    key = new_secret() if key is None else key
    if len(key) < 16:
        raise ValueError("a reader key has at least 16 characters")
    table.set_reader_key(key)
    table.save(update_fields=["reader_key"])
    return key
