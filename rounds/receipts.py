"""Commands received but not yet applied, by table, with the time each was received.

Receipt time decides (DESIGN.md, principle 4): a station's command is on time when the
server received it at or before the step's deadline, however long it then waited for the
database. So a step's expiry must not be applied while a command received before its
deadline is still on its way: ``writer.expire`` asks ``waiting_before`` and, if one is,
tries again a moment later.

Each server process registers a frame the moment it reads it, while the frame waits in its
connection's queue (``queued``, in this process's memory: tablehub/frame_stamps.py), and the
command for as long as it is handled (``holding``), letting go of it once its reply is
written. With one process (the embedded default) the
register is this process's memory; with several (REDIS_URL set) it is a sorted set per table
in Redis, scored by the receipt time, so that an expiry fired by any process or Celery
worker sees every process's commands. The times are the machines' clocks: several machines
need NTP, and their skew adds to a command's lateness (docs/operations.md). A register
entry older than ``STALE_SECONDS`` (its process died holding it) is ignored and dropped.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
import weakref
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

import redis
import redis.asyncio as aredis
from django.conf import settings

log = logging.getLogger("tablehub.receipts")

STALE_SECONDS = 60.0  # a command held longer than this was lost with its process
# A frame waits in its connection's queue only until its consumer is free: one that waited
# longer was never taken off it (its connection was dropped), and holds nothing up.
QUEUED_SECONDS = 10.0
# Frames still queued hold a step's expiry up to this long after its deadline, no longer: a
# queue whose consumer is gone (a connection daphne killed) must not stop the table.
QUEUED_HOLD_SECONDS = 2.0


class _Memory:
    def __init__(self, stale: float = STALE_SECONDS) -> None:
        self._lock = threading.Lock()
        self._stale = stale
        self._held: dict[int, dict[str, float]] = defaultdict(dict)

    def add(self, table_id: int, token: str, at: float) -> None:
        with self._lock:
            self._held[table_id][token] = at

    def remove(self, table_id: int, token: str) -> None:
        with self._lock:
            self._held[table_id].pop(token, None)

    def waiting_before(self, table_id: int, deadline: float, now: float) -> bool:
        with self._lock:
            held = self._held.get(table_id, {})
            return any(now - self._stale < at <= deadline for at in held.values())


_MEMORY = _Memory()
_QUEUED = _Memory(QUEUED_SECONDS)  # frames read by this process, not yet taken by a consumer
_sync_client: redis.Redis | None = None
# An asyncio client belongs to the loop it was made on.
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aredis.Redis] = (
    weakref.WeakKeyDictionary()
)


def _key(table_id: int) -> str:
    return f"tablehub:receipts:{table_id}"


def _redis() -> redis.Redis | None:
    global _sync_client
    if not settings.REDIS_URL:
        return None
    if _sync_client is None:
        _sync_client = redis.Redis.from_url(settings.REDIS_URL)
    return _sync_client


def _aredis() -> aredis.Redis | None:
    if not settings.REDIS_URL:
        return None
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        # A burst of hundreds of commands registers at once: past the pool's 100 connections
        # a plain pool fails (MaxConnectionsError) and the receipt went unregistered, so
        # another process's expiry could pass it by; this pool waits for a connection.
        pool = aredis.BlockingConnectionPool.from_url(settings.REDIS_URL, timeout=5)
        client = _async_clients[loop] = aredis.Redis(connection_pool=pool)
    return client


def queued(table_id: int, at: float) -> str:
    """Register a frame for the table read at ``at`` (epoch seconds) while it waits in its
    connection's queue; its consumer lets it go (``dequeued``). Called as the server reads
    the frame, in the event loop: memory only, no I/O."""
    token = uuid.uuid4().hex
    _QUEUED.add(table_id, token, at)
    return token


def dequeued(table_id: int, token: str) -> None:
    _QUEUED.remove(table_id, token)


@asynccontextmanager
async def holding(table_id: int, at: datetime) -> AsyncIterator[None]:
    """Register a command of the table received ``at`` for as long as it is being handled."""
    token = uuid.uuid4().hex
    stamp = at.timestamp()
    client = _aredis()
    if client is None:
        _MEMORY.add(table_id, token, stamp)
    else:
        try:
            await client.zadd(_key(table_id), {token: stamp})
        except redis.RedisError:  # Redis restarting: the command goes on, unregistered
            log.warning("table %s: a command's receipt could not be registered", table_id)
            client = None
            _MEMORY.add(table_id, token, stamp)
    try:
        yield
    finally:
        if client is None:
            _MEMORY.remove(table_id, token)
        else:
            try:
                await client.zrem(_key(table_id), token)
            except redis.RedisError:  # the entry goes stale and is dropped
                log.warning("table %s: a command's receipt could not be released", table_id)


def waiting_before(table_id: int, deadline: datetime, now: datetime) -> bool:
    """Whether a command of the table received at or before ``deadline`` is still being
    handled (by any server process), or a frame read by this process is still queued."""
    held = (now - deadline).total_seconds() < QUEUED_HOLD_SECONDS
    if held and _QUEUED.waiting_before(table_id, deadline.timestamp(), now.timestamp()):
        return True
    client = _redis()
    if client is None:
        return _MEMORY.waiting_before(table_id, deadline.timestamp(), now.timestamp())
    key = _key(table_id)
    oldest = now.timestamp() - STALE_SECONDS
    try:
        client.zremrangebyscore(key, "-inf", oldest)  # held by a process that died
        return bool(client.zrangebyscore(key, oldest, deadline.timestamp(), start=0, num=1))
    except redis.RedisError:  # no register to ask: the expiry goes ahead
        log.warning("table %s: the receipts could not be read", table_id)
        return _MEMORY.waiting_before(table_id, deadline.timestamp(), now.timestamp())
