"""The credit ledger: every movement of money is two entries, the station's and the house's,
that add up to zero. A station's credits are the sum of its entries; keys make every entry
impossible to write twice (a retried settlement finds its keys taken and writes nothing)."""

from __future__ import annotations

from decimal import Decimal

from django.db.models import Sum

from payouts.models import LedgerEntry


def post(station, round, kind: str, amount: Decimal, key: str) -> None:
    """Move ``amount`` to the station (negative: from it), the house taking the other side."""
    post_many(round, [(station, kind, amount, key)])


def post_many(round, movements) -> None:
    """Several movements ``(station, kind, amount, key)`` of one round in one insert."""
    entries = []
    for station, kind, amount, key in movements:
        entries.append(LedgerEntry(station=station, round=round, kind=kind, amount=amount, key=key))
        entries.append(
            LedgerEntry(station=None, round=round, kind=kind, amount=-amount, key=key + "|house")
        )
    if entries:
        LedgerEntry.objects.bulk_create(entries)


def balance(station) -> Decimal:
    total = LedgerEntry.objects.filter(station=station).aggregate(total=Sum("amount"))["total"]
    return (total or Decimal("0")).quantize(Decimal("0.01"))
