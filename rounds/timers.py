"""Round timers: a deadline is data on the round; this module only makes sure someone calls
``rounds.writer.expire`` at that moment (and, at a video table, that the virtual shoe
deals the next card a moment after the table asks for it).

Expiry is idempotent (keyed by round and step) and every command that arrives after a
deadline applies the expiry first, so correctness never depends on a timer firing on time;
only liveness does. Backends: Celery ETA tasks in production; in the embedded single-process
server the server's own event loop (a thread timer where no server loop is running, as in a
management command); none where the caller fires expiries itself.

A timer lives only as long as what holds it (the server process, or the Celery worker and
Redis): rounds/recovery.py arms them again after a restart and sweeps up any that were lost
(docs/recovery.md). ``every`` runs those sweeps periodically on the embedded server's loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Any

from asgiref.sync import SyncToAsync
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone

log = logging.getLogger("tablehub.timers")


def schedule(round_id: int, step_key: str, when: datetime) -> None:
    """Fire the expiry of this step at ``when``, once the current transaction commits."""
    _schedule("expire", (round_id, step_key), when)


def schedule_video_card(round_id: int, seq: int, when: datetime) -> None:
    """At a video table: deal the card the round asks for after its event ``seq``."""
    _schedule("video_card", (round_id, seq), when)


# The function behind each timer job, and the Celery task that calls it in production,
# registered by the app that owns them when Django starts (rounds.apps): the writer
# schedules timers, so this module cannot import it.
_JOBS: dict[str, Callable[..., object]] = {}
_TASKS: dict[str, Any] = {}


class _Gate:
    """Whether this process's timers and periodic jobs may run, and how many are running: a
    job runs only through ``running()``; ``close`` waits for those already running."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._open = True
        self._for_good = False
        self._running = 0
        self.reopened = 0  # how many times ``open`` opened it again after a ``close``

    def close(self, wait: float, for_good: bool = False) -> bool:
        """No job starts from now on (``for_good``: ``open`` no longer opens it); True once
        none runs (False: one still ran after ``wait`` seconds)."""
        with self._changed:
            self._open = False
            self._for_good = self._for_good or for_good
            return self._changed.wait_for(lambda: self._running == 0, timeout=wait)

    def open(self) -> None:
        with self._changed:
            if not self._open and not self._for_good:
                self._open, self.reopened = True, self.reopened + 1

    @contextmanager
    def running(self, armed: int | None = None) -> Iterator[bool]:
        """Yields whether the job may run; while it does, ``close`` waits for it. A timer
        ``armed`` while the gate had been reopened that many times runs only if it has not
        been closed and opened again since."""
        with self._changed:
            allowed = self._open and (armed is None or armed == self.reopened)
            self._running += allowed
        try:
            yield allowed
        finally:
            if allowed:
                with self._changed:
                    self._running -= 1
                    self._changed.notify_all()


_GATE = _Gate()


def stop(wait: float = 10.0) -> bool:
    """From now on, for good, timers and periodic jobs of this process that come due do
    nothing, and those already running are waited for (up to ``wait`` seconds; False if one
    still runs): a live replay's own server, whose database is about to go."""
    return _GATE.close(wait, for_good=True)


def pause(wait: float = 10.0) -> bool:
    """``stop`` until ``resume``: a test whose database is about to be emptied. A timer
    armed before the pause never fires after it (its round went with that database)."""
    return _GATE.close(wait)


def resume() -> None:
    """Timers and periodic jobs of this process act again after a ``pause`` (a test's new
    database is ready; a timer that came due meanwhile stays undone, as after a crash: the
    sweep finds it), not after a ``stop``."""
    _GATE.open()


def register(name: str, job: Callable[..., object], task: Any) -> None:
    """Make ``job`` the function a timer named ``name`` calls (``task``, its Celery task)."""
    _JOBS[name] = job
    _TASKS[name] = task


def run_now(name: str, *args: object) -> object:
    """Do a timer's job at once, in this thread (the sweep's late card at a video table)."""
    return _job(name)(*args)


def _job(name: str) -> Callable[..., object]:
    return _JOBS[name]


def _schedule(name: str, args: tuple, when: datetime) -> None:
    backend = settings.TABLEHUB_TIMERS
    if backend == "none":
        return
    transaction.on_commit(lambda: _start(backend, name, args, when))


def _start(backend: str, name: str, args: tuple, when: datetime) -> None:
    if backend == "celery":
        _TASKS[name].apply_async(args=list(args), eta=when)
        return
    delay = max((when - timezone.now()).total_seconds(), 0.0)
    armed = _GATE.reopened
    loop = server_loop()
    if loop is not None:  # inside the server: its own event loop keeps the time
        # A fresh context: the scheduling thread's asgiref context must not travel with it.
        fresh = contextvars.Context()
        loop.call_soon_threadsafe(
            partial(loop.call_later, delay, _fire_on_loop, name, args, armed, context=fresh),
            context=fresh,
        )
        return
    timer = threading.Timer(delay, _fire_in_thread, args=[name, args, armed])
    timer.daemon = True
    timer.start()


def every(seconds: float, job: Callable[[], object]) -> bool:
    """Run ``job`` (a synchronous function that uses the database) every ``seconds`` on the
    server's event loop, in a database thread, one run at a time, for as long as the process
    lives; a run is skipped while the timers backend is not "inprocess" (a test that fires
    its timers itself). False (nothing scheduled) when not called from inside the server."""
    loop = server_loop()
    if loop is None:
        return False
    fresh = contextvars.Context()  # as in _start: no asgiref context travels with it

    def tick() -> None:
        asyncio.ensure_future(run())

    async def run() -> None:
        try:
            if settings.TABLEHUB_TIMERS == "inprocess":
                await database_sync_to_async(_gated)(job)
        except RuntimeError as exc:
            if "shutdown" in str(exc):
                return  # the process is exiting: no next run
            log.exception("periodic %s failed", getattr(job, "__name__", job))
        except Exception:  # a failed run is logged; the next one comes all the same
            log.exception("periodic %s failed", getattr(job, "__name__", job))
        loop.call_later(seconds, tick, context=fresh)

    loop.call_soon_threadsafe(partial(loop.call_later, seconds, tick, context=fresh), context=fresh)
    return True


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The server's event loop, when called from one of its database threads.

    The in-memory channel layer's queues belong to that loop: an expiry fired from it
    (through database_sync_to_async) publishes its notices safely; a bare thread would not."""
    local = SyncToAsync.threadlocal
    loop = getattr(local, "main_event_loop", None)
    if loop is None or getattr(local, "main_event_loop_pid", None) != os.getpid():
        return None
    return loop if loop.is_running() else None


def _fire_on_loop(name: str, args: tuple, armed: int) -> None:
    async def fire() -> None:
        try:
            await database_sync_to_async(_gated)(_job(name), *args, armed=armed)
        except Exception as exc:
            # The process is exiting (its thread pool is shut down): the deadline is stored,
            # and the next start re-arms it (rounds.recovery).
            if isinstance(exc, RuntimeError) and "shutdown" in str(exc):
                return
            # Logged as in a thread (``_fire_in_thread``), not left in its task.
            log.exception("timer %s%r failed", name, args)

    asyncio.ensure_future(fire())


def _gated(job: Callable[..., object], *args: object, armed: int | None = None) -> None:
    """Run ``job`` unless the timers are stopped, or were paused since the timer was
    ``armed`` (in the calling database thread)."""
    with _GATE.running(armed) as allowed:
        if allowed:
            job(*args)


def _fire_in_thread(name: str, args: tuple, armed: int) -> None:
    close_old_connections()
    try:
        _gated(_job(name), *args, armed=armed)
    except Exception:  # logged like any failed timer; the sweep fires an overdue step again
        log.exception("timer %s%r failed", name, args)
    finally:
        close_old_connections()
