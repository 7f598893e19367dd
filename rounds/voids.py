"""Voiding a round: as if it had never been dealt.

A supervisor voids a round that is not settled (a misdeal, a shoe fault), or a settled
round whose result is not final yet: its dispute window is open, or a dispute made in time
waits for the supervisor (rounds/disputes.py). Every ledger
entry the round wrote for a station (its stakes: main, special, insurance, doubles and
splits; and any return already paid, such as a special bet settled after the deal or even
money; of a settled round every return; of a corrected round the corrections' entries too)
is reversed by a refund entry keyed ``<the entry's key>:void``: each station is back at its
credits before the round, and the keys make a second refund impossible. The round becomes
VOID; who approved it and why is its last RoundEvent (kind ``void``, payload ``{by, reason,
requested_by}``), after the resolution of its open dispute if it had one (kind
``dispute_resolved``, resolution ``void``), and the table hears ``{"type": "void",
"reason"}``. A settled round's Hand rows stay, for game recall.
"""

from __future__ import annotations

import logging
from decimal import Decimal

from django.db import transaction

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import disputes, writer
from rounds.engine import EngineError, Notice
from rounds.engine.money import fmt
from rounds.models import Round, RoundEvent

log = logging.getLogger("tablehub.rounds")

MAX_REASON = 200
TABLE_CLOSED = "the table closed with no bets"  # the reason of a betting round cancelled


def void_round(round_id: int, by: str, reason: str, requested_by: str = "") -> Round:
    """Void a round whose result is not final: refund every station, mark it VOID, tell the
    table.

    ``by`` is the approving supervisor's username, ``requested_by`` the tablet user who
    asked. Raises EngineError (``already_void``, ``round_over``, ``dispute_window_closed``,
    ``missing_field``, ``bad_message``) and changes nothing when the round cannot be voided."""
    if not isinstance(reason, str) or not reason.strip():
        raise EngineError("a void needs a reason", code="missing_field")
    reason = reason.strip()
    if len(reason) > MAX_REASON:
        raise EngineError(f"the reason is longer than {MAX_REASON} characters", code="bad_message")
    with transaction.atomic():
        round = (
            Round.objects.select_for_update(no_key=True).select_related("table").get(pk=round_id)
        )
        if round.phase == Round.Phase.VOID:
            raise EngineError(f"round {round.pk} is already void", code="already_void")
        settled = round.phase == Round.Phase.SETTLED
        if settled and not disputes.may_change_settled(round):
            if disputes.disputes_allowed(round.table):
                raise EngineError(
                    f"round {round.pk} is final: its dispute window has closed",
                    code="dispute_window_closed",
                )
            raise EngineError(
                f"round {round.pk} is settled: only a round not settled can be voided",
                code="round_over",
            )
        refunds = ledger.refund_round(round)  # a key taken (a second void) fails the whole void
        dispute = disputes.open_dispute(round)
        if dispute is not None:  # the void resolves it
            writer.append_record(
                round,
                RoundEvent.Kind.DISPUTE_RESOLVED,
                {
                    "dispute": dispute.seq,
                    "resolution": "void",
                    "by": by,
                    "requested_by": requested_by,
                    "reason": reason,
                },
            )
        writer.end_round(
            round,
            Round.Phase.VOID,
            {"by": by, "reason": reason, "requested_by": requested_by},
            Notice("public", {"type": "void", "reason": reason}),
            refund_notices(round, reason),
        )
        # The table goes on with a new round, as after a settlement (a settled round's
        # next round is already there).
        if round.table.is_open and not settled:
            table = round.table
            transaction.on_commit(lambda: writer.open_round(table))
    log.warning(
        "table %s round %s voided by %s (asked by %s): %s; %d ledger entries refunded",
        round.table_id,
        round.pk,
        by,
        requested_by or "-",
        reason,
        refunds,
    )
    return round


def refund_notices(round: Round, reason: str) -> list[Notice]:
    """What the void gave each station with money in the round back, for that station alone:
    ``staked`` (every stake it had put in), ``taken_back`` (what the round had paid it and the
    void takes back), ``refunded`` (the refunds' sum: its credits' change) and its
    ``credits`` now."""
    notices = []
    for station, totals in ledger.station_round_totals(round).items():
        refunded = totals.get(LedgerEntry.Kind.REFUND, Decimal(0))
        staked = -totals.get(LedgerEntry.Kind.STAKE, Decimal(0))
        returned = totals.get(LedgerEntry.Kind.RETURN, Decimal(0))
        message = {
            "type": "refunded",
            "round": round.pk,
            "reason": reason,
            "staked": fmt(staked),
            "taken_back": fmt(returned),
            "refunded": fmt(refunded),
            "credits": fmt(ledger.balance(station)),
        }
        notices.append(Notice(station.name, message))
    return notices


def void_record(round: Round) -> dict[str, str] | None:
    """Who voided the round and why, or None when it is not void."""
    if round.phase != Round.Phase.VOID:
        return None
    row = round.events.filter(kind=RoundEvent.Kind.VOID).order_by("-seq").first()
    if row is None:  # cancelled before any bet by closing the table, before that was logged
        return {"by": "", "reason": TABLE_CLOSED, "requested_by": ""}
    return {
        "by": row.payload.get("by", ""),
        "reason": row.payload.get("reason", ""),
        "requested_by": row.payload.get("requested_by", ""),
    }


def void_disputed_round(round_id: int, by: str, reason: str, requested_by: str = "") -> Round:
    """A supervisor resolves the dispute that halts the round by voiding it; raises
    EngineError (``no_dispute`` and those of ``void_round``) having changed nothing."""
    with transaction.atomic():
        round = Round.objects.select_for_update(no_key=True).get(pk=round_id)
        if not writer.is_halted(round):
            raise EngineError(f"round {round.pk} has no open dispute", code="no_dispute")
        return void_round(round_id, by, reason, requested_by=requested_by)
