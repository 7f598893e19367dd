"""An idle socket on the Redis channel layer stays open (issue 17, finding 9).

redis-py 8 reads with a 5 s socket timeout by default, and channels_redis' blocking receive
waits 5 s on the server: with nothing to read, the read timed out and every idle socket was
closed with 1011 after about 5 s (channels_redis issue 422). The layer's settings give the
connections a timeout longer than the blocking receive (tablehub/settings.py).

A read that never times out while the layer's blocking pops return every 5 s needs no
longer than a few of them to show: the socket idles through three (it idled a minute until
the CI run passed 20 minutes), and the test checks the two timeouts' order itself.
"""

import asyncio
import time

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer

from tablehub.models import Jurisdiction
from tests.fuzz.support import join, make_table, next_reply
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

IDLE_SECONDS = 15  # three of the layer's blocking pops (brpop_timeout 5 s)


async def test_an_idle_station_socket_stays_open(redis_url):
    layer = get_channel_layer()
    assert isinstance(layer, RedisChannelLayer), "REDIS_URL set: the Redis layer"
    # Each connection's reads wait longer than the pop that blocks longest on the server.
    assert all(host["socket_timeout"] > 2 * layer.brpop_timeout for host in layer.hosts)
    table = await database_sync_to_async(
        lambda: make_table(
            "idle", "reader-secret", {"s1": "s1-secret"}, Jurisdiction.objects.create(code="x")
        )
    )()
    ws = await join(table, "s1", "s1-secret")
    try:
        started = time.monotonic()
        while time.monotonic() - started < IDLE_SECONDS:
            # Nothing may arrive (a close included) while the socket is idle.
            assert await ws.receive_nothing(timeout=5), "the idle socket got a frame or closed"
        await ws.send_json_to({"type": "ping", "client_id": "still-there"})
        reply = await next_reply(ws)
        assert reply["ok"] and reply["client_id"] == "still-there", reply
    finally:
        await ws.disconnect()
        await asyncio.sleep(0)
