"""Celery tasks of the stations: the stored replies' retention (Celery beat,
CELERY_BEAT_SCHEDULE "forget-old-replies"; stations/retention.py)."""

from __future__ import annotations

from celery import shared_task

from stations.retention import forget_old_replies


@shared_task(acks_late=True)
def forget_replies() -> int:
    """Delete the stored replies older than TABLEHUB_KEEP_REPLIES_HOURS; how many."""
    return forget_old_replies()
