"""Carrying on after the server process starts: the embedded server keeps its timers in
memory, so a restart must arm them again from the deadlines stored on the rounds.

``resume_tables`` re-arms every open step's timer at its stored deadline (at once when
already past), lets a video table's virtual shoe deal a card its round is waiting for, and
opens a round at every open table that has none. Each of these is idempotent, so running it
twice, or in two processes, changes nothing more than running it once.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from rounds import services, timers
from rounds.models import Round
from tablehub.models import Table

log = logging.getLogger("tablehub.recovery")
UNFINISHED = (
    Round.Phase.BETTING,
    Round.Phase.DEAL,
    Round.Phase.BONUS,
    Round.Phase.INSURANCE,
    Round.Phase.PLAY,
    Round.Phase.DEALER,
)


def resume_tables() -> dict[str, int]:
    """Re-arm timers and reopen open tables; returns what it did (for the log and tests)."""
    done = {"timers": 0, "video_cards": 0, "rounds_opened": 0}
    unfinished = Round.objects.filter(phase__in=UNFINISHED).select_related("table")
    for round in unfinished:
        with transaction.atomic():
            if round.step_key and round.deadline:
                timers.schedule(round.pk, round.step_key, round.deadline)
                done["timers"] += 1
            if round.table.mode == Table.Mode.VIDEO and round.phase != Round.Phase.BETTING:
                if services.state(round.pk).awaiting_card is not None:
                    timers.schedule_video_card(round.pk, round.last_seq, timezone.now())
                    done["video_cards"] += 1
    busy = set(unfinished.values_list("table_id", flat=True))
    for table in Table.objects.filter(is_open=True).exclude(pk__in=busy):
        services.open_round(table)
        done["rounds_opened"] += 1
    if any(done.values()):
        log.info("resumed after start: %s", done)
    return done
