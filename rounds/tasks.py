"""Celery tasks of the round: timer expiries."""

from celery import shared_task


@shared_task(acks_late=True)
def expire_step(round_id: int, step_key: str) -> None:
    """Apply a step's timeout; a no-op when the round has moved on (idempotent)."""
    from rounds.services import expire

    expire(round_id, step_key)
