"""Celery application for timers and background work.

Configured from Django settings under the ``CELERY_`` namespace; without
REDIS_URL tasks run eagerly in-process (see settings). Workers run the round timers (ETA
tasks) and the reports; one beat process (``celery -A tablehub beat``) sends the periodic
recovery sweeps of CELERY_BEAT_SCHEDULE: missed timers every few seconds, stale games every
few minutes (docs/recovery.md).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tablehub.settings")

app = Celery("tablehub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
