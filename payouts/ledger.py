"""The credit ledger: every movement of money is two entries, the station's and the house's,
that add up to zero. A station's credits are the sum of its entries; keys make every entry
impossible to write twice (a retried settlement finds its keys taken and writes nothing).

Nothing updates or deletes an entry: a correction or a void is a new, compensating entry.
``check`` verifies the books (``manage.py check_ledger``)."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Sum

from payouts.models import LedgerEntry

CENT = Decimal("0.01")
HOUSE = "|house"  # the house side's key: the station side's key and this


def post(station, round, kind: str, amount: Decimal, key: str) -> None:
    """Move ``amount`` to the station (negative: from it), the house taking the other side."""
    post_many(round, [(station, kind, amount, key)])


def post_many(round, movements) -> None:
    """Several movements ``(station, kind, amount, key)`` of one round in one insert."""
    entries = []
    for station, kind, amount, key in movements:
        entries.append(LedgerEntry(station=station, round=round, kind=kind, amount=amount, key=key))
        entries.append(
            LedgerEntry(station=None, round=round, kind=kind, amount=-amount, key=key + HOUSE)
        )
    if entries:
        LedgerEntry.objects.bulk_create(entries)


def post_once(station, round, kind: str, amount: Decimal, key: str) -> bool:
    """``post``, unless ``key`` is taken (a resent cash-in, say): False then, and nothing is
    written. The unique key decides, not a read before the write, so two connections
    posting the same key at once write it once."""
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction goes on
            post(station, round, kind, amount, key)
    except IntegrityError:
        if not LedgerEntry.objects.filter(key=key).exists():
            raise  # another constraint broke: not a repeat
        return False
    return True


def money(total: Any) -> Decimal:
    """A sum of amounts as Decimal in cents on every database (SQLite's sum can come back as
    a float), never -0.00."""
    if total is None:
        return Decimal("0.00")
    if not isinstance(total, Decimal):
        total = Decimal(str(total))
    return total.quantize(CENT) + Decimal("0.00")  # adding zero turns -0.00 into 0.00


def balance(station) -> Decimal:
    total = LedgerEntry.objects.filter(station=station).aggregate(total=Sum("amount"))["total"]
    return money(total)


def check() -> list[str]:
    """Every broken invariant of the books, one line each (none: the books balance). The
    whole ledger and each round's entries sum to zero; each station's entry has its house
    mirror (same round, same kind, the opposite amount); each station's balance is exactly
    the sum of its entries."""
    broken: list[str] = []
    rows = list(LedgerEntry.objects.values_list("key", "station_id", "round_id", "kind", "amount"))
    total = sum((Decimal(str(r[4])) for r in rows), Decimal(0))
    if total != 0:
        broken.append(f"the whole ledger sums to {money(total)}, not 0.00")
    by_round: dict[int, Decimal] = defaultdict(Decimal)
    by_station: dict[int, Decimal] = defaultdict(Decimal)
    by_key = {r[0]: r for r in rows}
    for key, station_id, round_id, kind, amount in rows:
        amount = Decimal(str(amount))
        if round_id is not None:
            by_round[round_id] += amount
        if station_id is None:
            continue
        by_station[station_id] += amount
        mirror = by_key.get(key + HOUSE)
        if mirror is None:
            broken.append(f"entry {key} has no house mirror")
        elif mirror[1:4] != (None, round_id, kind) or Decimal(str(mirror[4])) != -amount:
            broken.append(f"entry {key} and its house mirror do not match")
    for round_id, amount in sorted(by_round.items()):
        if amount != 0:
            broken.append(f"round {round_id}'s entries sum to {money(amount)}, not 0.00")
    names = dict(
        LedgerEntry.objects.filter(station__isnull=False)
        .values_list("station_id", "station__name")
        .distinct()
    )
    for station_id, amount in sorted(by_station.items()):
        shown = balance(station_id)
        if shown != amount:
            broken.append(
                f"station {station_id} ({names[station_id]})'s balance {shown} is not the sum "
                f"of its entries, {amount}"
            )
    return broken
