"""Disputes (seed 001, section 3.7): a player who believes there was an error disputes the
round, and the round halts until a supervisor resolves the dispute.

Where the table's jurisdiction allows disputes (``Jurisdiction.disputes_allowed``; never at a
video table: "dispute is only possible on live tables with the Croupier Interface"), a
station with a bet in a round may dispute it after its first card until it is settled, and
then for the jurisdiction's ``dispute_window_seconds`` after the settlement (0: not after the
round). After the window the result is final (``dispute_window_closed``).

A dispute is a RoundEvent (kind ``dispute``, payload ``{station, phase, step_key,
deadline}``: the step it stopped) and halts the round: its step key becomes
``halted:<seq of the dispute>`` and its deadline is cleared, so every input (card, decision,
timer expiry) is refused with ``round_halted`` and changes nothing, and a timer already on
its way finds nothing to expire. Every station hears ``{"type": "halted", "reason":
"dispute", "round"}``. A supervisor resolves it (RoundEvent ``dispute_resolved``, payload
``{dispute, resolution, by, requested_by, ...}``) by continuing the round as it was, by
correcting cards (rounds/corrections.py) or by voiding it (rounds/voids.py); the step then
goes on with a fresh step time and every station hears ``{"type": "resumed", "round",
"resolution", "deadline"}`` (after a void: the ``void`` event instead).

A dispute of a settled round halts nothing else: the table plays on, and the disputed
round's result is not final until the supervisor resolves the dispute, even when its
window closes meanwhile (the dispute was made in time).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import DateTimeField, Max, Q
from django.utils import timezone

from rounds import writer
from rounds.engine import EngineError, Notice
from rounds.models import ENDED, IN_PLAY, Bet, Round, RoundEvent
from rounds.replay import rebuild
from stations.models import Station
from tablehub.compiled import CompiledQuery, Param
from tablehub.models import Table

log = logging.getLogger("tablehub.rounds")

RESOLUTIONS = ("continue", "correct", "void")
RECENT = 10  # the table's rounds in which the tablet looks for open disputes


# -- reading -----------------------------------------------------------------------------------


def disputes_allowed(table: Table) -> bool:
    return table.jurisdiction.disputes_allowed and table.mode != Table.Mode.VIDEO


def window_end(round: Round) -> datetime | None:
    """When a settled round's result becomes final; None for a round not settled, or where
    disputes are not allowed."""
    if round.phase != Round.Phase.SETTLED or round.settled_at is None:
        return None
    if not disputes_allowed(round.table):
        return None
    return round.settled_at + timedelta(seconds=round.table.jurisdiction.dispute_window_seconds)


def window_open(round: Round, now: datetime | None = None) -> bool:
    end = window_end(round)
    return end is not None and (now or timezone.now()) < end


def may_change_settled(round: Round) -> bool:
    """A settled round's payouts may still change: its window is open, or a dispute made in
    time waits for the supervisor."""
    return window_open(round) or writer.is_halted(round)


def open_dispute(round: Round) -> RoundEvent | None:
    """The dispute that halts the round, if any."""
    if not writer.is_halted(round):
        return None
    seq = int(round.step_key.removeprefix(writer.HALTED))
    return round.events.filter(seq=seq, kind=RoundEvent.Kind.DISPUTE).first()


def describe(row: RoundEvent) -> dict[str, Any]:
    """A dispute as the tablet shows it: who, when, which round, and how it was resolved."""
    return {
        "round": row.round_id,
        "seq": row.seq,
        "station": row.payload.get("station"),
        "at": row.created_at.isoformat(),
        "phase": row.payload.get("phase"),
    }


def table_disputes(table: Table) -> list[dict[str, Any]]:
    """The open disputes of the table's recent rounds, oldest first."""
    rounds = [
        r
        for r in table.rounds.order_by("-pk").only("pk", "step_key")[:RECENT]
        if writer.is_halted(r)
    ]
    rows = [open_dispute(r) for r in reversed(rounds)]
    return [describe(row) for row in rows if row is not None]


def default_round(station: Station) -> Round | None:
    """The round a station's dispute is about when it names none: the round being dealt
    if the station has a bet in it, else the last settled round it had a bet in."""
    table = station.table
    current = table.rounds.exclude(phase__in=ENDED).order_by("-pk").first()
    if (
        current is not None
        and current.phase != Round.Phase.BETTING
        and current.bets.filter(station=station).exists()
    ):
        return current
    return (
        Round.objects.filter(table=table, phase=Round.Phase.SETTLED, bets__station=station)
        .order_by("-pk")
        .first()
    )


# The last settled round of a table that each station had a bet in and whose result may
# still be disputed (in its window, or halted by a dispute), by station: a batch's replies
# read them together (tablehub/compiled.py: its SQL built once).
_LAST_DISPUTABLE = CompiledQuery(
    lambda: (
        Bet.objects.filter(
            station_id__among=Param("ids"),
            round__table_id=Param("table_id"),
            round__phase=Round.Phase.SETTLED,
        )
        .filter(
            Q(round__settled_at__gt=Param("since", DateTimeField()))
            | Q(round__step_key__startswith=writer.HALTED)
        )
        .values("station_id")
        .annotate(last=Max("round_id"))
        .order_by()
        .values_list("station_id", "last")
    )
)


def stations_disputes(
    stations: Sequence[Station], shown: Round | None, with_bets: Collection[int], cards: int
) -> dict[int, Any]:
    """What each Dispute button of stations of one table shows (``dispute`` in their
    states), by station id: None when the station may not dispute now. ``shown`` is the
    round in their states, ``with_bets`` the ids of the stations with a bet in it and
    ``cards`` how many cards that round has drawn. The round is the one ``default_round``
    names. One query for any number of stations (two when one has a round to dispute)."""
    if not stations:
        return {}
    table = stations[0].table
    if not disputes_allowed(table):
        return {station.pk: None for station in stations}
    window = table.jurisdiction.dispute_window_seconds
    in_play = shown if shown is not None and shown.phase in IN_PLAY else None
    disputes: dict[int, Any] = {}
    settled: list[int] = []  # stations whose button names their last settled round
    for station in stations:
        if in_play is not None and station.pk in with_bets:
            disputes[station.pk] = _button(in_play) if cards else None  # from the first card on
        elif window:
            settled.append(station.pk)
        else:
            disputes[station.pk] = None
    if settled:
        since = timezone.now() - timedelta(seconds=window)
        last = dict(_LAST_DISPUTABLE.list(ids=settled, table_id=table.pk, since=since))
        rounds = Round.objects.in_bulk(set(last.values()))
        for round in rounds.values():
            round.table = table
        for station_id in settled:
            target = rounds.get(last[station_id]) if station_id in last else None
            disputes[station_id] = None if target is None else _button(target)
    return {station.pk: disputes[station.pk] for station in stations}


def _button(target: Round) -> dict[str, Any]:
    until = window_end(target)
    return {
        "round": target.pk,
        "number": target.number,
        "until": until.isoformat() if until else None,
        "halted": writer.is_halted(target),
    }


# -- disputing ---------------------------------------------------------------------------------


def file_dispute(station: Station, round_id: int | None = None) -> Round:
    """A station disputes a round (the default one unless named): the round halts. Raises
    EngineError (``disputes_not_allowed``, ``no_round``, ``not_in_round``, ``no_card_yet``,
    ``round_over``, ``dispute_window_closed``, ``already_halted``) having changed nothing."""
    table = Table.objects.select_related("jurisdiction").get(pk=station.table_id)
    if not disputes_allowed(table):
        raise EngineError("disputes are not allowed at this table", code="disputes_not_allowed")
    if round_id is None:
        target = default_round(station)
        if target is None:
            raise EngineError("you have no round to dispute", code="no_round")
        round_id = target.pk
    with transaction.atomic():
        round = writer.locked_round(round_id)
        if round is None or round.table_id != table.pk:
            raise EngineError(f"round {round_id} is not a round of this table", code="no_round")
        round.table = table
        _check_disputable(round, station)
        halted = _halt(round, station)
    log.warning(
        "table %s round %s disputed by station %s: halted (event %s)",
        table.pk,
        round.pk,
        station.name,
        halted.seq,
    )
    return round


def _check_disputable(round: Round, station: Station) -> None:
    if not round.bets.filter(station=station).exists():
        raise EngineError(f"you have no bet in round {round.pk}", code="not_in_round")
    if round.phase == Round.Phase.VOID:
        raise EngineError(f"round {round.pk} is void", code="round_over")
    if round.phase == Round.Phase.BETTING:
        raise EngineError("no card has been dealt yet", code="no_card_yet")
    if writer.is_halted(round):
        raise EngineError(f"round {round.pk} is already halted by a dispute", code="already_halted")
    if round.phase == Round.Phase.SETTLED:
        if not window_open(round):
            raise EngineError(
                f"round {round.pk} is final: its dispute window has closed",
                code="dispute_window_closed",
            )
        return
    if not rebuild(round).drawn:
        raise EngineError("no card has been dealt yet", code="no_card_yet")


def _halt(round: Round, station: Station) -> RoundEvent:
    return writer.halt(
        round,
        {
            "station": station.name,
            "phase": round.phase,
            "step_key": round.step_key,
            "deadline": round.deadline.isoformat() if round.deadline else None,
        },
        Notice("public", {"type": "halted", "reason": "dispute", "round": round.pk}),
    )


# -- resolving ---------------------------------------------------------------------------------


def continue_round(round_id: int, by: str, requested_by: str = "", reason: str = "") -> Round:
    """A supervisor (``by``, already checked) resolves the dispute that halts the round by
    letting it go on as it was (a correction: rounds/corrections.py; a void:
    rounds/voids.py). Raises EngineError (``no_dispute``) having changed nothing."""
    with transaction.atomic():
        round = (
            Round.objects.select_for_update(no_key=True).select_related("table").get(pk=round_id)
        )
        row = open_dispute(round)
        if row is None:
            raise EngineError(f"round {round.pk} has no open dispute", code="no_dispute")
        resume(round, row, "continue", by, requested_by, {"reason": reason} if reason else {})
    log.warning(
        "table %s round %s: dispute %s resolved by %s (asked by %s): continue",
        round.table_id,
        round.pk,
        row.seq,
        by,
        requested_by or "-",
    )
    return round


def resume(
    round: Round,
    dispute: RoundEvent,
    resolution: str,
    by: str,
    requested_by: str,
    extra: dict[str, Any],
    tell: bool = True,
) -> Notice:
    """Record the resolution of ``dispute`` and let the (locked) round go on: a round in play
    gets a fresh step time; every station hears ``resumed`` (the caller tells them, after its
    own news, without ``tell``). Saves the round."""
    writer.resume(
        round,
        {
            "dispute": dispute.seq,
            "resolution": resolution,
            "by": by,
            "requested_by": requested_by,
            **extra,
        },
        in_play=round.phase in IN_PLAY,
    )
    notice = Notice(
        "public",
        {
            "type": "resumed",
            "round": round.pk,
            "resolution": resolution,
            "deadline": round.deadline.isoformat() if round.deadline else None,
        },
    )
    if tell:
        writer.publish(round, [notice])
    return notice
