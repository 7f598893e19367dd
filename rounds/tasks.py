"""Celery tasks of the round: timer expiries and the video table's virtual dealer."""

from celery import shared_task


@shared_task(acks_late=True)
def expire_step(round_id: int, step_key: str) -> None:
    """Apply a step's timeout; a no-op when the round has moved on (idempotent)."""
    from rounds.services import expire

    expire(round_id, step_key)


@shared_task(acks_late=True)
def deal_video_card(round_id: int, seq: int) -> None:
    """Deal the card a video table's round asks for; a no-op once the round moved on."""
    from croupier.video import deal_video_card as deal

    deal(round_id, seq)
