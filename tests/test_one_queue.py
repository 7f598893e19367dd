"""A consumer's messages from one queue (tablehub/one_queue.py): the socket's frames and the
channel layer's messages for the consumer's channel are all dispatched, each source in its
order; a failed channel read is raised as channels raises it; once the consumer stops no
task is left behind; a ``receive`` that is not a queue's gets channels' own loop. The table
consumers (tablehub/consumers.py) run on it in every websocket test."""

import asyncio

import pytest
from channels.consumer import AsyncConsumer
from channels.exceptions import StopConsumer
from channels.layers import InMemoryChannelLayer, channel_layers
from channels.testing import ApplicationCommunicator

from tablehub import one_queue


class Recorder(AsyncConsumer):
    """Keeps every message it is dispatched; stops at ``{"type": "stop"}``."""

    seen: list[dict] = []

    async def __call__(self, scope, receive, send):
        await one_queue.serve(self, scope, receive, send)

    async def dispatch(self, message):
        if message["type"] == "stop":
            raise StopConsumer
        type(self).seen.append(message)
        if message["type"] == "tell.name":
            await self.send({"type": "name", "channel": self.channel_name})


@pytest.fixture
def recorder():
    Recorder.seen = []
    return Recorder


class FailingLayer(InMemoryChannelLayer):
    """A channel layer whose server is gone once a channel is made."""

    async def receive(self, channel):
        await asyncio.sleep(0.01)
        raise ConnectionError("the channel layer's server is gone")


async def test_frames_and_channel_messages_are_all_dispatched_each_in_its_order(recorder):
    app = ApplicationCommunicator(recorder.as_asgi(), {"type": "websocket", "path": "/ws/x/"})
    await app.send_input({"type": "tell.name"})
    channel = (await app.receive_output(5))["channel"]
    layer = channel_layers["default"]
    for n in range(3):
        await app.send_input({"type": "frame", "n": n})
        await layer.send(channel, {"type": "event", "n": n})
    await asyncio.sleep(0.2)
    await app.send_input({"type": "stop"})
    await app.wait(5)
    seen = recorder.seen[1:]
    assert [m["n"] for m in seen if m["type"] == "frame"] == [0, 1, 2]
    assert [m["n"] for m in seen if m["type"] == "event"] == [0, 1, 2]


async def test_no_task_is_left_once_the_consumer_stops(recorder):
    before = len(asyncio.all_tasks())
    app = ApplicationCommunicator(recorder.as_asgi(), {"type": "websocket", "path": "/ws/x/"})
    await app.send_input({"type": "frame", "n": 0})
    await asyncio.sleep(0.05)
    assert len(asyncio.all_tasks()) >= before + 2  # the consumer and its channel's mover
    await app.send_input({"type": "stop"})
    await app.wait(5)
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before
    assert recorder.seen == [{"type": "frame", "n": 0}]


async def test_a_failed_channel_read_is_raised_from_the_consumer(recorder, monkeypatch):
    monkeypatch.setitem(channel_layers.backends, "default", FailingLayer())
    app = ApplicationCommunicator(recorder.as_asgi(), {"type": "websocket", "path": "/ws/x/"})
    with pytest.raises(ConnectionError, match="gone"):
        await app.wait(5)


async def test_a_receive_that_is_not_a_queues_gets_channels_own_loop(recorder):
    queue: asyncio.Queue = asyncio.Queue()

    async def receive():  # not a bound Queue.get: one_queue cannot put the channel's on it
        return await queue.get()

    outputs: list = []

    async def send(message):
        outputs.append(message)

    consumer = recorder()
    task = asyncio.ensure_future(consumer({"type": "websocket", "path": "/"}, receive, send))
    await queue.put({"type": "tell.name"})
    await asyncio.sleep(0.05)
    await channel_layers["default"].send(outputs[0]["channel"], {"type": "event", "n": 9})
    await asyncio.sleep(0.05)
    await queue.put({"type": "stop"})
    await asyncio.wait_for(task, 5)
    assert recorder.seen[1:] == [{"type": "event", "n": 9}]
