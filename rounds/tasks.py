"""Celery tasks of the round: timer expiries, the video table's virtual dealer, and the
periodic sweeps that Celery beat runs (CELERY_BEAT_SCHEDULE in tablehub/settings.py)."""

from celery import shared_task

from croupier import video
from rounds import recovery, stale, writer


@shared_task(acks_late=True)
def expire_step(round_id: int, step_key: str) -> None:
    """Apply a step's timeout; a no-op when the round has moved on (idempotent)."""
    writer.expire(round_id, step_key)


@shared_task(acks_late=True)
def deal_video_card(round_id: int, seq: int) -> None:
    """Deal the card a video table's round asks for; a no-op once the round moved on."""
    video.deal_video_card(round_id, seq)


@shared_task(acks_late=True)
def sweep_timers() -> dict[str, int]:
    """Celery beat, every few seconds: act on deadlines whose timer was lost (a worker killed
    while holding it, Redis restarted without its data); see rounds.recovery.sweep."""
    return recovery.sweep()


@shared_task(acks_late=True)
def void_stale_games() -> list[int]:
    """Celery beat, every few minutes: cancel and refund the rounds that cannot finish
    (rounds/stale.py); returns the round ids voided."""
    return stale.void_stale_rounds()
