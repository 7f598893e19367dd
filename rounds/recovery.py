"""Carrying on after a crash (docs/recovery.md): every timer is a deadline stored on its
round, so whatever held the timer (the embedded server's event loop, a Celery worker, Redis)
may die; the deadline stays, and these functions make sure it is acted on.

``resume_tables`` runs when the embedded server starts (the first websocket to connect in
the process, ``server_connected``): it cancels the games that went stale
while the server was down, re-arms every open step's timer at its stored deadline (at once
when already past), lets a video table's virtual shoe deal a card its round is waiting for,
opens a round at every open table that has none, and starts the periodic sweeps on the
server's loop.

``sweep`` is the safety net for lost timers, run every few seconds (Celery beat in
production, ``rounds.tasks.sweep_timers``; the server's loop in the embedded default): it
expires every step whose deadline passed more than a grace period ago, deals the card a
video round has waited for too long, and opens a round at an open table left without one
(a process killed between a settlement and the opening of the next round).

Each of these is idempotent (``writer.expire`` is keyed by round and step, a video card by
the round's event number, and a table is opened under its row lock), so running them twice,
or in two processes, changes nothing more than running them once.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.db.models.functions import Coalesce
from django.utils import timezone

from rounds import stale, timers, writer
from rounds.engine import Round as Engine
from rounds.models import CARD_PHASES, UNFINISHED, Round
from stations import retention
from tablehub import broadcast
from tablehub.models import Table

log = logging.getLogger("tablehub.recovery")

# The server loop whose periodic sweeps are running (once per process).
_SWEEPING_ON: object | None = None


def server_connected() -> None:
    """Called by each consumer as it connects, on the loop it receives on. The first time
    in a process, the embedded server's timers are armed again (``resume_tables``)."""
    if broadcast.remember_server_loop() and settings.TABLEHUB_TIMERS == "inprocess":
        asyncio.ensure_future(database_sync_to_async(resume_tables)())


def resume_tables() -> dict[str, int]:
    """Re-arm timers and reopen open tables; returns what it did (for the log and tests)."""
    stale.void_stale_rounds()  # a game abandoned for longer than allowed is not carried on
    done = {"timers": 0, "video_cards": 0, "rounds_opened": 0}
    unfinished = Round.objects.filter(phase__in=UNFINISHED).select_related("table")
    for round in unfinished:
        with transaction.atomic():
            if round.step_key and round.deadline:
                timers.schedule(round.pk, round.step_key, round.deadline)
                done["timers"] += 1
            if round.table.mode == Table.Mode.VIDEO and round.phase != Round.Phase.BETTING:
                if writer.read(round.pk, _wants_a_card):
                    timers.schedule_video_card(round.pk, round.last_seq, timezone.now())
                    done["video_cards"] += 1
    busy = set(unfinished.values_list("table_id", flat=True))
    for table in Table.objects.filter(is_open=True).exclude(pk__in=busy):
        if _open_if_idle(table.pk):
            done["rounds_opened"] += 1
    if any(done.values()):
        log.info("resumed after start: %s", done)
    start_sweeps()
    return done


def sweep(grace: float | None = None) -> dict[str, int]:
    """Act on every deadline that passed more than ``grace`` seconds ago and was missed
    (its timer died with a process or with Redis); returns what it did."""
    grace = settings.TABLEHUB_SWEEP_GRACE_SECONDS if grace is None else grace
    before = timezone.now() - timedelta(seconds=grace)
    done = {"expired": 0, "video_cards": 0, "rounds_opened": 0}
    overdue = Round.objects.filter(phase__in=UNFINISHED, deadline__lt=before).exclude(step_key="")
    for round_id, step_key in overdue.values_list("pk", "step_key"):
        if _safely(round_id, "expire", writer.expire, round_id, step_key):
            done["expired"] += 1
    waiting = stale.with_last_activity(
        Round.objects.filter(phase__in=CARD_PHASES, step_key="", table__mode=Table.Mode.VIDEO)
    ).filter(last_activity__lt=before)
    for round_id, seq in waiting.values_list("pk", "last_seq"):
        if _safely(round_id, "video card", _deal_if_waiting, round_id, seq):
            done["video_cards"] += 1
    for table_id in _idle_open_tables(before):
        if _open_if_idle(table_id):
            done["rounds_opened"] += 1
    if any(done.values()):
        log.warning("sweep acted on missed timers: %s", done)
    return done


def start_sweeps() -> bool:
    """On the embedded server (in-process timers): run ``sweep``, the stale-game sweep and
    the stored replies' retention (stations/retention.py) periodically on the server's own
    event loop. Once per process; False elsewhere (Celery beat runs them in production; a
    management command or a test runs them itself)."""
    global _SWEEPING_ON
    if settings.TABLEHUB_TIMERS != "inprocess":
        return False
    loop = timers.server_loop()
    if loop is None or loop is _SWEEPING_ON:
        return False
    _SWEEPING_ON = loop
    timers.every(settings.TABLEHUB_SWEEP_SECONDS, sweep)
    timers.every(settings.TABLEHUB_STALE_SWEEP_SECONDS, stale.void_stale_rounds)
    timers.every(settings.TABLEHUB_REPLIES_SWEEP_SECONDS, retention.forget_old_replies)
    return True


def _safely(round_id: int, what: str, job, *args) -> bool:
    """``job(*args)``; False when it did nothing or failed (logged: one broken round must
    not keep the sweep from the others)."""
    try:
        return job(*args) is not False
    except Exception:
        log.exception("round %s: the sweep's %s failed", round_id, what)
        return False


def _wants_a_card(engine: Engine) -> bool:
    return engine.awaiting_card is not None


def _deal_if_waiting(round_id: int, seq: int) -> bool:
    if not writer.read(round_id, _wants_a_card):
        return False  # waiting for the stations' answers, not for a card
    timers.run_now("video_card", round_id, seq)  # the croupier app's virtual dealer
    return True


def _idle_open_tables(before) -> list[int]:
    """Open tables with no unfinished round and no round activity since ``before`` (the
    grace keeps the sweep from racing the opening that follows every settlement or void)."""
    busy = Round.objects.filter(phase__in=UNFINISHED).values("table_id")
    tables = (
        Table.objects.filter(is_open=True)
        .exclude(pk__in=busy)
        .annotate(ended=Max(Coalesce("rounds__events__created_at", "rounds__created_at")))
    )
    return [
        pk for pk, ended in tables.values_list("pk", "ended") if ended is None or ended < before
    ]


def _open_if_idle(table_id: int) -> bool:
    """Open a round at an open table that has none (under the table's row lock, as the
    croupier tablet's open_table, so two processes cannot both open one)."""
    with transaction.atomic():
        table = Table.objects.select_for_update(no_key=True).get(pk=table_id)
        if not table.is_open or table.rounds.filter(phase__in=UNFINISHED).exists():
            return False
        writer.open_round(table)
        return True
