"""Round timers: a deadline is data on the round; this module only makes sure someone calls
``rounds.services.expire`` at that moment.

Expiry is idempotent (keyed by round and step) and every command that arrives after a
deadline applies the expiry first, so correctness never depends on a timer firing on time;
only liveness does. Backends: Celery ETA tasks in production; in the embedded single-process
server the server's own event loop (a thread timer where no server loop is running, as in a
management command); none where the caller fires expiries itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from datetime import datetime
from functools import partial

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone


def schedule(round_id: int, step_key: str, when: datetime) -> None:
    """Fire the expiry of this step at ``when``, once the current transaction commits."""
    backend = settings.TABLEHUB_TIMERS
    if backend == "none":
        return
    transaction.on_commit(lambda: _start(backend, round_id, step_key, when))


def _start(backend: str, round_id: int, step_key: str, when: datetime) -> None:
    if backend == "celery":
        from rounds.tasks import expire_step

        expire_step.apply_async(args=[round_id, step_key], eta=when)
        return
    delay = max((when - timezone.now()).total_seconds(), 0.0)
    loop = _server_loop()
    if loop is not None:  # inside the server: its own event loop keeps the time
        # A fresh context: the scheduling thread's asgiref context must not travel with it.
        fresh = contextvars.Context()
        loop.call_soon_threadsafe(
            partial(loop.call_later, delay, _fire_on_loop, round_id, step_key, context=fresh),
            context=fresh,
        )
        return
    timer = threading.Timer(delay, _fire_in_thread, args=[round_id, step_key])
    timer.daemon = True
    timer.start()


def _server_loop() -> asyncio.AbstractEventLoop | None:
    """The server's event loop, when called from one of its database threads.

    The in-memory channel layer's queues belong to that loop: an expiry fired from it
    (through database_sync_to_async) publishes its notices safely; a bare thread would not."""
    local = SyncToAsync.threadlocal
    loop = getattr(local, "main_event_loop", None)
    if loop is None or getattr(local, "main_event_loop_pid", None) != os.getpid():
        return None
    return loop if loop.is_running() else None


def _fire_on_loop(round_id: int, step_key: str) -> None:
    from channels.db import database_sync_to_async

    from rounds.services import expire

    asyncio.ensure_future(database_sync_to_async(expire)(round_id, step_key))


def _fire_in_thread(round_id: int, step_key: str) -> None:
    from rounds.services import expire

    close_old_connections()
    try:
        expire(round_id, step_key)
    finally:
        close_old_connections()
