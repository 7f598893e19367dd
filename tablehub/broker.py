"""The Celery broker's transport: kombu's Redis transport with one fault of its own fixed.

A worker that loses Redis while it holds ETA tasks (every round timer is one) closes its
channel, and kombu (5.7) then tries to put the held tasks back through a connection it has
already dropped: an ``AttributeError`` ("'NoneType' object has no attribute 'hostname'")
that the worker treats as unrecoverable, so it exits instead of reconnecting (issue 17,
liveness). Here that attempt fails as what it is, a lost connection, which the worker
ignores while it reconnects. The held tasks are not lost by it: Redis keeps them in its
``unacked`` set until the visibility timeout, and the recovery sweep fires any deadline a
lost timer missed (rounds/recovery.py, docs/recovery.md).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:  # the connection was closed under the channel
            raise RedisConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]  # not in the stubs


class Transport(kombu_redis.Transport):
    Channel = Channel
