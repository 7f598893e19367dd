"""Commands received but not yet applied, by table, with the time each was received.

Receipt time decides (DESIGN.md, principle 4): a station's command is on time when the
server received it at or before the step's deadline, however long it then waited for the
database. So a step's expiry must not be applied while a command received before its
deadline is still on its way: ``writer.expire`` asks ``waiting_before`` and, if one is,
tries again a moment later.

Each server process registers, in its memory, a frame the moment it reads it, while the
frame waits in its connection's queue (``queued``: tablehub/frame_stamps.py), and the
command for as long as it is handled (``holding``), letting go of each once its reply is
written. With one process (the embedded default) that memory is the whole register.

With several processes (REDIS_URL set), an expiry may be fired by any process or by a
Celery worker, which cannot read another process's memory. So every process that reads
frames publishes its register to Redis every ``PUBLISH_SECONDS`` from a thread of its own
(``publishing``): the time of the snapshot and, for each table, the oldest frame still
queued and the oldest command still handled. A frame is stamped with the time it reached
the machine (tablehub/sockets.py), which may be before its event loop reads it: a snapshot
is therefore of a time ``at`` that every loop of the process serving websockets has come
round twice since (the second turn runs after every read of the first, and the first
turn's poll of the sockets came after ``at``), so that every frame received before ``at``
has been read and registered. An expiry for a deadline waits until every process publishing
has published a snapshot of a time after the deadline, and then while any snapshot holds a
frame of the table received at or before it. A process silent for ``SILENT_SECONDS`` is
gone (its frames went with it).

The times are the machines' clocks: several machines need NTP, and their skew adds to a
command's lateness (docs/operations.md). A frame still queued holds an expiry at most
``QUEUED_HOLD_SECONDS`` past its deadline, a command handled at most ``STALE_SECONDS``.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import json
import logging
import os
import threading
import time
import uuid
import weakref
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

import redis
from django.conf import settings

log = logging.getLogger("tablehub.receipts")

STALE_SECONDS = 60.0  # a command held longer than this was lost with its process
# A frame waits in its connection's queue only until its consumer is free: one that waited
# longer was never taken off it (its connection was dropped), and holds nothing up.
QUEUED_SECONDS = 10.0
# Frames still queued hold a step's expiry up to this long after its deadline, no longer: a
# queue whose consumer is gone (a connection daphne killed) must not stop the table.
QUEUED_HOLD_SECONDS = 2.0
PUBLISH_SECONDS = 0.02  # how often a process publishes its register (an expiry waits that)
SILENT_SECONDS = 1.0  # a process that published nothing for this long is gone
REGISTER_KEY = "tablehub:receipts"  # a hash: process -> its last snapshot (JSON)


class _Memory:
    """One process's register: table -> token (``_TOKENS``) -> receipt time (epoch seconds)."""

    def __init__(self, stale: float) -> None:
        self._lock = threading.Lock()
        self._stale = stale
        self._held: dict[int, dict[int, float]] = defaultdict(dict)

    def add(self, table_id: int, token: int, at: float) -> None:
        with self._lock:
            self._held[table_id][token] = at

    def remove(self, table_id: int, token: int) -> None:
        with self._lock:
            held = self._held.get(table_id)
            if held is not None:
                held.pop(token, None)
                if not held:
                    del self._held[table_id]

    def oldest(self, now: float) -> dict[int, float]:
        """Each table's oldest receipt not yet stale."""
        with self._lock:
            oldest = {}
            for table_id, held in self._held.items():
                times = [at for at in held.values() if at > now - self._stale]
                if times:
                    oldest[table_id] = min(times)
            return oldest


_HELD = _Memory(STALE_SECONDS)  # commands this process is handling
_QUEUED = _Memory(QUEUED_SECONDS)  # frames read by this process, not yet done with
_PROCESS = uuid.uuid4().hex  # this process in the shared register
# A registration's token: unique in this process, which alone holds it (a count, not a
# UUID: every frame a burst reads takes two).
_TOKENS = itertools.count()
_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()  # serving websockets
_publisher_lock = threading.Lock()
_publisher: threading.Thread | None = None
_sync_client: redis.Redis | None = None


def queued(table_id: int, at: float) -> int:
    """Register a frame for the table read at ``at`` (epoch seconds) while it waits in its
    connection's queue; its consumer lets it go (``dequeued``). Called as the server reads
    the frame, in the event loop: memory only, no I/O."""
    token = next(_TOKENS)
    _QUEUED.add(table_id, token, at)
    return token


def dequeued(table_id: int, token: int) -> None:
    _QUEUED.remove(table_id, token)


@contextmanager
def holding(table_id: int, at: datetime) -> Iterator[None]:
    """Register a command of the table received ``at`` for as long as it is being handled."""
    token = next(_TOKENS)
    _HELD.add(table_id, token, at.timestamp())
    try:
        yield
    finally:
        _HELD.remove(table_id, token)


@dataclass(frozen=True)
class Snapshot:
    """A process's register at ``at``: per table, its oldest frame queued and command held."""

    at: float
    queued: dict[int, float]
    held: dict[int, float]

    def holds(self, table_id: int, deadline: float, now: float) -> bool:
        """Whether, as of this snapshot, a frame of the table received at or before the
        deadline was still on its way (one only queued counts until QUEUED_HOLD_SECONDS)."""
        if self.held.get(table_id, float("inf")) <= deadline:
            return True
        queued_until = deadline + QUEUED_HOLD_SECONDS
        return now < queued_until and self.queued.get(table_id, float("inf")) <= deadline

    def encode(self) -> str:
        return json.dumps({"at": self.at, "queued": self.queued, "held": self.held})

    @classmethod
    def decode(cls, text: str | bytes) -> Snapshot:
        data = json.loads(text)
        return cls(
            data["at"],
            {int(t): at for t, at in data["queued"].items()},
            {int(t): at for t, at in data["held"].items()},
        )


def _mine(now: float, at: float | None = None) -> Snapshot:
    """This process's register now, as a snapshot of ``at`` (now, if not given)."""
    return Snapshot(now if at is None else at, _QUEUED.oldest(now), _HELD.oldest(now))


def waiting_before(table_id: int, deadline: datetime, now: datetime) -> bool:
    """Whether a command of the table received at or before ``deadline`` is still queued or
    being handled, by this process or (REDIS_URL set) by any process publishing its register."""
    at, by = deadline.timestamp(), now.timestamp()
    if _mine(by).holds(table_id, at, by):
        return True
    return any(
        (at < by and snapshot.at <= at) or snapshot.holds(table_id, at, by)
        for snapshot in publishers(by).values()
    )  # not yet published since the deadline passed, or holding a frame received in time


def publishers(now: float) -> dict[str, Snapshot]:
    """The last snapshot of every other process publishing its register (REDIS_URL set),
    but for those silent for SILENT_SECONDS (gone; dropped once STALE_SECONDS old)."""
    client = _redis()
    if client is None:
        return {}
    try:
        published: dict[bytes, bytes] = client.hgetall(REGISTER_KEY)  # type: ignore[assignment]
        snapshots = {process.decode(): Snapshot.decode(text) for process, text in published.items()}
        gone = [p for p, snapshot in snapshots.items() if snapshot.at < now - STALE_SECONDS]
        if gone:
            client.hdel(REGISTER_KEY, *gone)
    except redis.RedisError:  # no register to ask: the expiry goes ahead
        log.warning("the receipts register could not be read")
        return {}
    return {
        process: snapshot
        for process, snapshot in snapshots.items()
        if process != _PROCESS and snapshot.at >= now - SILENT_SECONDS
    }


def publish(snapshot: Snapshot, process: str = _PROCESS) -> None:
    """Write a process's snapshot to the shared register."""
    client = _redis()
    if client is not None:
        client.hset(REGISTER_KEY, process, snapshot.encode())


def publishing(loop: asyncio.AbstractEventLoop) -> None:
    """Start publishing this process's register (once per process; REDIS_URL set only),
    of frames read by ``loop``. Called as a loop first serves a websocket
    (tablehub/frame_stamps.py)."""
    global _publisher
    if not settings.REDIS_URL:
        return
    if loop not in _LOOPS:
        _LOOPS.add(loop)
    if _publisher is not None:
        return
    with _publisher_lock:
        if _publisher is None:
            _publisher = threading.Thread(target=_publish_forever, name="receipts", daemon=True)
            _publisher.start()
            atexit.register(_unpublish)


def _publish_forever() -> None:
    # A thread, not a task of the event loop: it waits for the loops to come round, and a
    # Redis write must not hold up a loop busy with a burst.
    while True:
        started = time.monotonic()
        at = time.time()
        try:
            loops = [loop for loop in list(_LOOPS) if loop.is_running()]
            if read_since(loops, at, SILENT_SECONDS / 2):
                publish(_mine(time.time(), at))
        except redis.RedisError:
            log.warning("the receipts could not be published (pid %s)", os.getpid())
            time.sleep(SILENT_SECONDS / 2)
        time.sleep(max(PUBLISH_SECONDS - (time.monotonic() - started), 0.0))


def read_since(loops: list[asyncio.AbstractEventLoop], at: float, timeout: float) -> bool:
    """Whether each of these running loops has read every frame that reached the machine
    before ``at`` (called just after ``at``): each comes round twice, within ``timeout``.
    A loop's turn polls every socket, and a callback scheduled during a turn runs after
    that turn's reads."""
    if not loops:
        return True
    turns = threading.Semaphore(0)

    def first_turn(loop: asyncio.AbstractEventLoop) -> None:
        loop.call_soon(turns.release)

    for loop in loops:
        try:
            loop.call_soon_threadsafe(first_turn, loop)
        except RuntimeError:  # closed meanwhile: it reads nothing more
            turns.release()
    deadline = time.monotonic() + timeout
    return all(turns.acquire(timeout=max(deadline - time.monotonic(), 0)) for _ in loops)


def _unpublish() -> None:
    try:
        client = _redis()
        if client is not None:
            client.hdel(REGISTER_KEY, _PROCESS)
    except redis.RedisError:
        pass  # silent, it is taken for gone in SILENT_SECONDS


def _redis() -> redis.Redis | None:
    global _sync_client
    if not settings.REDIS_URL:
        return None
    if _sync_client is None:
        _sync_client = redis.Redis.from_url(settings.REDIS_URL)
    return _sync_client
