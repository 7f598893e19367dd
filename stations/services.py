"""Station services: cash in through the ledger (a cash-in opens the player's session), and
tip the dealer where the jurisdiction allows it."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from payouts import ledger
from rounds import writer
from rounds.engine import EngineError, parse_money
from rounds.engine.money import fmt
from rounds.models import Round
from stations import protection
from stations.models import Station
from tablehub import broadcast
from tablehub.models import Table


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


@transaction.atomic
def tip(station: Station, amount: Decimal, key: str) -> Decimal:
    """Tip the dealer ``amount`` from the station's credits, once per ``key``: the ledger
    moves it to the table's tip account, the meters count it and the tablet is told
    (docs/croupier.md, ``tip``). Refused, changing nothing, where the jurisdiction does not
    allow tips or the table has no dealer (``tips_not_allowed``), for an amount not above
    0.00 (``bad_amount``) and for more than the credits not staked on the open round
    (``insufficient_credits``). Returns the credits after it."""
    # Read now, not from the station's table as it was when its socket joined.
    mode, allowed, currency = (
        Table.objects.filter(pk=station.table_id)
        .values_list("mode", "jurisdiction__tips_allowed", "currency")
        .get()
    )
    if not allowed:
        raise EngineError(
            "the jurisdiction does not allow tips", station.name, code="tips_not_allowed"
        )
    if mode != Table.Mode.DEALER:
        raise EngineError(
            "a video table has no dealer to tip", station.name, code="tips_not_allowed"
        )
    if amount <= 0:
        raise EngineError("a tip must be more than 0.00", station.name, code="bad_amount")
    # The lock order of a bet change and a cash-out: the open round, then the station.
    round = writer.current_round(station.table_id)
    if round is not None:
        round = writer.locked_round(round.pk)
    ledger.lock_stations([station])
    credits = ledger.balance(station)
    if round is not None and round.phase == Round.Phase.BETTING:  # stakes not taken yet
        bets = writer.stations_bets(round, [station.pk])[station.pk]
        credits -= sum((bet.stake for bet in bets), Decimal(0))
    if amount > credits:
        raise EngineError(
            f"credits {fmt(credits)} not staked do not cover a tip of {fmt(amount)}",
            station.name,
            code="insufficient_credits",
        )
    if ledger.tip(station, amount, f"client:{key}"):
        told = {
            "type": "tip",
            "station": station.name,
            "amount": fmt(amount),
            "currency": currency,
            "at": timezone.now().isoformat(),
        }
        transaction.on_commit(lambda: broadcast.tell_croupier(station.table_id, told))
    return ledger.balance(station)
