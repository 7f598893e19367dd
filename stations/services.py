"""Station services: cash in through the ledger (a cash-in opens the player's session)."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import transaction

from payouts import ledger
from rounds.engine import EngineError, parse_money
from stations import protection
from stations.models import Station


@transaction.atomic
def cash_in(station: Station, amount: object, key: str) -> Decimal:
    """Add credits to a station; ``key`` (from the cashier or client) makes it idempotent.
    Raises EngineError, writing nothing, for an amount that is not money, above the most
    one cash-in may bring (``amount_too_large``) or above what the balance may hold
    (``balance_limit``): ``ledger.cash_in``."""
    try:
        value = parse_money(amount, "cash-in amount")
    except EngineError as exc:
        if exc.code != "amount_too_large":
            raise EngineError(exc.reason, station.name, code="bad_amount") from None
        most = ledger.money(settings.TABLEHUB_MAX_CASH_IN)
        raise EngineError(
            f"a cash-in is at most {most}, not {amount}", station.name, code="amount_too_large"
        ) from None
    if value <= 0:
        raise EngineError("a cash-in must be more than 0.00", station.name, code="bad_amount")
    # Under the station's lock: two first cash-ins at once open one session.
    ledger.lock_stations([station])
    protection.refuse_on_break(station)
    if ledger.cash_in(station, value, key):  # once per key, however often it is sent
        protection.open_session(station, key)
    return ledger.balance(station)
