"""One Redis connection pool per process for Django's cache.

Django keeps a cache backend per asyncio context (``caches`` is an asgiref ``Local``), and
each ``RedisCache`` makes its own connection pool. Under daphne every websocket's consumer is
its own context, so every socket that touched the cache (a station's join reads its failed
attempts, tablehub/attempts.py) left a Redis connection of its own open: about one per
connected station, a thousand at a stadium of 1000 (docs/benchmarks.md). Django's own fix is
not released (django/django pull request 18459). ``SharedConnectionPool`` is the pool class
the cache is given (settings ``CACHES["default"]["OPTIONS"]["pool_class"]``): every backend
of the process built for one URL and options gets the same pool, so the connections are as
many as the cache's users at one moment. redis-py's pool is thread-safe and starts afresh in
a forked child (a Celery worker's).
"""

from __future__ import annotations

import threading
from typing import Any

import redis


class SharedConnectionPool(redis.ConnectionPool):
    """A ``redis.ConnectionPool`` whose ``from_url`` gives one pool per URL and options."""

    _pools: dict[tuple[str, str], SharedConnectionPool] = {}
    _pools_lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> SharedConnectionPool:
        key = (url, repr(sorted(kwargs.items())))
        with cls._pools_lock:
            pool = cls._pools.get(key)
            if pool is None:
                pool = cls._pools[key] = super().from_url(url, **kwargs)
            return pool
