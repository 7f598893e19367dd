"""Station services: cash in and cash out through the ledger."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction

from payouts import ledger
from payouts.models import LedgerEntry
from rounds.engine import EngineError, parse_money
from stations.models import Station


@transaction.atomic
def cash_in(station: Station, amount: object, key: str) -> Decimal:
    """Add credits to a station; ``key`` (from the cashier or client) makes it idempotent."""
    value = parse_money(amount, "cash-in amount")
    if value <= 0:
        raise EngineError("a cash-in must be more than 0.00", station.name, code="invalid")
    full_key = f"station:{station.pk}:cash_in:{key}"
    ledger.post_once(station, None, LedgerEntry.Kind.CASH_IN, value, full_key)  # once per key
    return ledger.balance(station)
