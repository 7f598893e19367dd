"""Stale games: a round that cannot finish (no dealer, no cards, a table left mid-round) is
cancelled and refunded once its jurisdiction's ``stale_game_hours`` have passed since its
last activity (docs/recovery.md, "Stale games").

The last activity of a round is its newest RoundEvent (a bet closing, a card, a decision, a
timeout), or its opening when it has none. A round still taking bets with no bet on it is
left alone: nothing is at stake and the table simply waits for players. A jurisdiction whose
``stale_game_hours`` is 0 cancels nothing.

``void_stale_rounds`` is run every few minutes: by Celery beat in production
(``rounds.tasks.void_stale_games``, tablehub/settings.py's CELERY_BEAT_SCHEDULE), and on the
embedded server's own event loop (rounds/recovery.py). Each round is checked again under its
row lock before it is voided, and ``rounds.voids.void_round`` refuses a round already void
or settled and keys every refund, so two sweeps at once, or one sweep twice, refund nothing
twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, Max, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from rounds.engine import EngineError
from rounds.models import ENDED, Bet, Round
from rounds.voids import void_round
from tablehub.models import Jurisdiction

log = logging.getLogger("tablehub.recovery")

SYSTEM = "system"


def stale_reason(hours: int) -> str:
    return f"stale game: not finished within {hours} hours"


def with_last_activity(rounds):
    """Annotate ``last_activity``: the round's newest event, or its opening without one."""
    return rounds.annotate(last_activity=Coalesce(Max("events__created_at"), "created_at"))


def stale_rounds(now: datetime | None = None) -> list[tuple[int, int]]:
    """(round id, the jurisdiction's hours) of every round that should be cancelled now."""
    now = now or timezone.now()
    found: list[tuple[int, int]] = []
    limits = (
        Jurisdiction.objects.filter(stale_game_hours__gt=0)
        .values_list("stale_game_hours", flat=True)
        .distinct()
    )
    has_bets = Exists(Bet.objects.filter(round=OuterRef("pk")))
    for hours in sorted(set(limits)):
        rounds = (
            with_last_activity(
                Round.objects.exclude(phase__in=ENDED).filter(
                    table__jurisdiction__stale_game_hours=hours
                )
            )
            .annotate(has_bets=has_bets)
            # A betting round with no bet on it risks nothing: the table waits for players.
            .filter(~Q(phase=Round.Phase.BETTING) | Q(has_bets=True))
            .filter(last_activity__lt=now - timedelta(hours=hours))
            .order_by("pk")
        )
        found += [(pk, hours) for pk in rounds.values_list("pk", flat=True)]
    return found


def void_stale_rounds(now: datetime | None = None) -> list[int]:
    """Void and refund every stale round (by "system"); returns the ids voided. Idempotent."""
    voided = []
    for round_id, hours in stale_rounds(now):
        try:
            if _void_if_still_stale(round_id, hours, now):
                voided.append(round_id)
        except EngineError as exc:  # voided or settled meanwhile: nothing to do
            log.info("round %s: not voided as stale: %s", round_id, exc.line())
        except Exception:  # one broken round must not keep the others from being cancelled
            log.exception("round %s: the stale-game sweep failed", round_id)
    if voided:
        log.warning("stale games voided and refunded: rounds %s", voided)
    return voided


def _void_if_still_stale(round_id: int, hours: int, now: datetime | None) -> bool:
    with transaction.atomic():
        # The round's row lock, then a fresh look: a card or a decision may have just come.
        round = Round.objects.select_for_update(no_key=True).filter(pk=round_id).first()
        if round is None or round.phase in ENDED:
            return False
        last = with_last_activity(Round.objects.filter(pk=round_id)).get().last_activity
        if last >= (now or timezone.now()) - timedelta(hours=hours):
            return False
        void_round(round_id, SYSTEM, stale_reason(hours))
        return True
