"""Celery tasks of the table: program authentication every 24 hours (Celery beat,
CELERY_BEAT_SCHEDULE "verify-install"; tablehub/program.py)."""

from __future__ import annotations

from celery import shared_task

from tablehub.program import check_and_record


@shared_task(acks_late=True)
def verify_install() -> bool:
    """Check the installed files against the manifest and keep the result; True: verified."""
    return check_and_record().ok
