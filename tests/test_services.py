"""The real services: PostgreSQL behind DATABASE_URL, Redis behind REDIS_URL.

These skip locally when the variables are unset and fail under CI=true.
"""

import asyncio
import uuid

import pytest
from channels.layers import channel_layers
from channels_redis.core import RedisChannelLayer
from django.db import connection

pytestmark = pytest.mark.services


async def test_group_message_arrives_through_redis_channel_layer(redis_url: str) -> None:
    layer = channel_layers.make_backend("default")  # a fresh layer from settings
    assert isinstance(layer, RedisChannelLayer), "REDIS_URL is set, so the layer must be Redis"
    group = f"test-{uuid.uuid4().hex}"
    channel = await layer.new_channel()
    try:
        await layer.group_add(group, channel)
        await layer.group_send(group, {"type": "table.event", "text": "bets closed"})
        message = await asyncio.wait_for(layer.receive(channel), timeout=5)
        assert message == {"type": "table.event", "text": "bets closed"}
    finally:
        await layer.group_discard(group, channel)
        await layer.close_pools()


@pytest.mark.django_db
def test_database_is_postgresql(postgres_url: str) -> None:
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        (version,) = cursor.fetchone()
    assert version.startswith("PostgreSQL")
