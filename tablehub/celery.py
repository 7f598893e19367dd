"""Celery application for timers and background work.

Configured from Django settings under the ``CELERY_`` namespace; without
REDIS_URL tasks run eagerly in-process (see settings). Workers run the round timers (ETA
tasks) and the reports; one beat process (``celery -A tablehub beat``) sends the periodic
recovery sweeps of CELERY_BEAT_SCHEDULE: missed timers every few seconds, stale games every
few minutes (docs/recovery.md). A worker may serve its metrics (docs/operations.md,
"Metrics").
"""

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tablehub.settings")

app = Celery("tablehub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def verify_install_at_start(**kwargs: object) -> None:
    """Program authentication when a worker starts (tablehub/program.py), as the servers do."""
    from tablehub.program import check_at_start  # noqa: PLC0415 (Django is set up by now)

    check_at_start()


@worker_ready.connect
def serve_metrics(**kwargs: object) -> None:
    """With TABLEHUB_WORKER_METRICS_PORT set, the worker serves its metrics (the timers'
    lateness: tablehub/metrics.py) at http://TABLEHUB_WORKER_METRICS_ADDR:PORT/metrics
    (default address 127.0.0.1). A prefork pool's children count in PROMETHEUS_MULTIPROC_DIR
    when it is set (an empty folder per worker), else use ``--pool=solo`` or ``threads``."""
    port = os.environ.get("TABLEHUB_WORKER_METRICS_PORT")
    if not port:
        return
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess, start_http_server

    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    address = os.environ.get("TABLEHUB_WORKER_METRICS_ADDR", "127.0.0.1")
    start_http_server(int(port), addr=address, registry=registry)
