"""Django's cache on Redis shares one connection pool per process (tablehub/redis_pool.py):
each websocket's consumer is an asyncio context of its own, Django keeps a cache backend per
context, and before this every station that joined (its failed attempts are read from the
cache, tablehub/attempts.py) left a Redis connection of its own open. Needs Redis (skips
locally without it, fails under CI=true)."""

import asyncio
import contextvars

import pytest
from asgiref.sync import sync_to_async
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.core.cache import cache

from tablehub import attempts

pytestmark = pytest.mark.services


def joined(n: int) -> object:
    """What a station's join does with the cache (``attempts.too_many``), and the connection
    pool the cache used for it."""
    assert attempts.too_many("station", f"redis-pool-test:{n}", "127.0.0.1") is None
    return cache._cache.get_client().connection_pool  # type: ignore[attr-defined]


async def test_sockets_in_contexts_of_their_own_share_one_pool(redis_url):
    async def join(n: int) -> object:
        return await sync_to_async(joined)(n)

    shared = await sync_to_async(joined)(-1)
    before = shared._created_connections
    # As daphne starts each socket's consumer: a task in a context of its own.
    tasks = [asyncio.create_task(join(n), context=contextvars.Context()) for n in range(40)]
    pools = await asyncio.gather(*tasks)
    assert {id(pool) for pool in pools} == {id(shared)}
    # One thread used the cache (the database thread): no new connection for 40 sockets.
    assert shared._created_connections == before


async def test_the_channel_layer_takes_more_than_a_hundred_commands_at_once(redis_url):
    """A stadium's stations join together: each adds its socket to a group. redis-py 8's
    asyncio pool refuses a 101st connection at once unless told it may open more."""
    layer = RedisChannelLayer(hosts=[settings.REDIS_LAYER_HOST | {"address": redis_url}])
    channels = [await layer.new_channel() for _ in range(300)]
    try:
        await asyncio.gather(*(layer.group_add("pool-test", c) for c in channels))
    finally:
        await asyncio.gather(*(layer.group_discard("pool-test", c) for c in channels))
