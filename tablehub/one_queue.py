"""A table consumer's messages taken from one queue, not raced for.

Channels' ``AsyncConsumer.__call__`` waits for its two sources, the socket's frames
(``receive``) and its channel on the channel layer, with ``await_many_dispatch``: for every
message it makes a new task for the next read and runs ``asyncio.wait`` over both, about 30
us a message (measured alone) where taking an item from a queue costs 1. In a burst every
station's answer pays it on the event loop.

``serve`` does what channels' ``__call__`` does (the scope, the channel on the layer, the
send), but moves the channel's messages onto the socket's own queue as they come (a task
per connection, blocked while the channel is quiet), so the consumer takes every message
with one ``await receive()``. Messages from each source keep their order. A channel read
that fails is raised from the consumer's loop, as channels raises it. Where ``receive`` is
not an ``asyncio.Queue``'s ``get`` (daphne's and channels' test communicator's both are),
channels' own ``__call__`` runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from channels.consumer import AsyncConsumer
from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer


class _ChannelFailed:
    """The channel's read failed: the consumer's loop raises ``error``."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def serve(
    consumer: Any,  # an AsyncConsumer: its attributes are set as channels sets them
    scope: Any,
    receive: Callable[[], Awaitable[Any]],
    send: Callable[[Any], Awaitable[None]],
) -> None:
    """Run ``consumer`` for its connection, its messages from ``receive``'s queue."""
    queue = getattr(receive, "__self__", None)
    if not isinstance(queue, asyncio.Queue) or consumer._sync:  # a sync consumer: channels'
        await AsyncConsumer.__call__(consumer, scope, receive, send)
        return
    consumer.scope = scope
    consumer.channel_layer = get_channel_layer(consumer.channel_layer_alias)
    mover = None
    if consumer.channel_layer is not None:
        consumer.channel_name = await consumer.channel_layer.new_channel()
        consumer.channel_receive = functools.partial(
            consumer.channel_layer.receive, consumer.channel_name
        )
        mover = asyncio.ensure_future(_move(consumer.channel_receive, queue))
    consumer.base_send = send
    try:
        while True:
            message = await receive()
            if isinstance(message, _ChannelFailed):
                raise message.error
            await consumer.dispatch(message)
    except StopConsumer:
        pass
    finally:
        if mover is not None:
            mover.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await mover


async def _move(channel_receive: Callable[[], Awaitable[Any]], queue: asyncio.Queue) -> None:
    while True:
        try:
            message = await channel_receive()
        except Exception as error:  # e.g. the channel layer's server gone (not a cancel)
            queue.put_nowait(_ChannelFailed(error))
            return
        queue.put_nowait(message)
