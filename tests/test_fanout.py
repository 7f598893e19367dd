"""The per-process table hub (tablehub/fanout.py): one channel-layer message per commit,
each frame to the sockets it is for, in order; membership renewed at every join; a failing
layer closes the sockets so that stations rejoin and get the whole state."""

from __future__ import annotations

import asyncio
import copy
import json

import msgpack  # type: ignore[import-untyped]  # channels_redis' serializer
import pytest
from channels.layers import InMemoryChannelLayer

from rounds.engine import Notice
from tablehub import broadcast, direct_send, fanout


class RecordingSocket:
    """Stands in for a consumer: what the hub wrote to it, and how it was closed."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.closed_with: int | None = None

    def deliver_now(self, outgoing) -> bool:
        return False  # as a connection that is not daphne's: the hub delivers the text

    async def deliver(self, text: str) -> None:
        self.texts.append(text)

    async def close(self, code: int | None = None) -> None:
        self.closed_with = code


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def send(layer, table_id: int, frames) -> None:
    await layer.group_send(fanout.table_group(table_id), fanout.frames_message(frames))
    await settle()


@pytest.fixture
def layer():
    return InMemoryChannelLayer()


async def test_each_frame_goes_to_the_sockets_it_is_for_in_order(layer) -> None:
    s1, s1_again, s2, croupier = (RecordingSocket() for _ in range(4))
    hub = await fanout.join(s1, 7, layer, "s1")
    assert await fanout.join(s1_again, 7, layer, "s1") is hub  # one hub per table
    await fanout.join(s2, 7, layer, "s2")
    await fanout.join(croupier, 7, layer)
    assert list(layer.groups[fanout.table_group(7)]) == [hub.channel]  # the process, once

    await send(
        layer,
        7,
        [
            (fanout.PUBLIC, None, "card"),
            (fanout.STATION, "s1", "s1 prompt"),
            (fanout.STATION, "s2", "s2 prompt"),
            (fanout.CROUPIER, None, "reader error"),
            (fanout.PUBLIC, None, "step"),
        ],
    )
    assert s1.texts == ["card", "s1 prompt", "step"]
    assert s1_again.texts == ["card", "s1 prompt", "step"]
    assert s2.texts == ["card", "s2 prompt", "step"]
    assert croupier.texts == ["card", "reader error", "step"]
    hub.close()


class WritingSocket(RecordingSocket):
    """A consumer whose connection takes frames at once: each send's frames, as written."""

    def __init__(self) -> None:
        super().__init__()
        self.sends: list[tuple[str, ...]] = []
        self.bytes: list[bytes] = []

    def deliver_now(self, outgoing) -> bool:
        self.sends.append(outgoing.texts)
        self.bytes.append(outgoing.frame)
        return True


async def test_what_a_commit_says_to_a_socket_goes_in_one_send_in_order(layer) -> None:
    s1, s2, croupier = WritingSocket(), WritingSocket(), WritingSocket()
    hub = await fanout.join(s1, 8, layer, "s1")
    await fanout.join(s2, 8, layer, "s2")
    await fanout.join(croupier, 8, layer)
    frames = [
        (fanout.STATION, "s1", "s1 settlement"),
        (fanout.PUBLIC, None, "round over"),
        (fanout.STATION, "s2", "s2 settlement"),
        (fanout.PUBLIC, None, "phase"),
    ]
    await send(layer, 8, frames)
    await send(layer, 8, [(fanout.PUBLIC, None, "card")])

    assert s1.sends == [("s1 settlement", "round over", "phase"), ("card",)]
    assert s2.sends == [("round over", "s2 settlement", "phase"), ("card",)]
    assert croupier.sends == [("round over", "phase"), ("card",)]
    one = {
        text: direct_send.Outgoing(text).frame for text in ("s1 settlement", "round over", "phase")
    }
    assert s1.bytes[0] == one["s1 settlement"] + one["round over"] + one["phase"]
    hub.close()


async def test_a_connection_that_cannot_take_them_gets_them_the_usual_way_in_order(layer) -> None:
    usual = RecordingSocket()
    hub = await fanout.join(usual, 9, layer, "s1")
    await send(layer, 9, [(fanout.STATION, "s1", "hand"), (fanout.PUBLIC, None, "step")])
    assert usual.texts == ["hand", "step"]
    hub.close()


async def test_a_commit_is_one_layer_message_for_every_station(layer, monkeypatch) -> None:
    sockets = {f"s{n}": RecordingSocket() for n in range(1, 4)}
    for name, socket in sockets.items():
        await fanout.join(socket, 3, layer, name)
    sent = []
    real_group_send = layer.group_send

    async def counting_group_send(group, message):
        sent.append(group)
        await real_group_send(group, message)

    monkeypatch.setattr(layer, "group_send", counting_group_send)
    monkeypatch.setattr(broadcast, "get_channel_layer", lambda: layer)
    notices = [Notice("public", {"type": "card", "card": "9H"})]
    notices += [Notice(name, {"type": "balance", "credits": "90.00"}) for name in sockets]
    await asyncio.get_running_loop().run_in_executor(None, broadcast.publish, 3, 11, 4, notices)
    await settle()

    assert sent == ["table.3"]
    for n, socket in enumerate(sockets.values(), start=1):
        frames = [json.loads(text) for text in socket.texts]
        assert [frame["id"] for frame in frames] == ["11.4.0", f"11.4.{n}"]
        assert frames[0]["event"] == {"type": "card", "card": "9H"}
        assert frames[1]["event"] == {"type": "balance", "credits": "90.00"}
    fanout._HUBS[3].close()


async def test_the_last_socket_to_leave_closes_the_hub_and_leaves_the_group(layer) -> None:
    first, second = RecordingSocket(), RecordingSocket()
    hub = await fanout.join(first, 5, layer, "s1")
    await fanout.join(second, 5, layer, "s2")
    hub.remove(first)
    assert not hub.closed
    hub.remove(first)  # twice changes nothing
    hub.remove(second)
    await settle()
    assert hub.closed and not layer.groups.get(fanout.table_group(5))
    again = RecordingSocket()
    assert await fanout.join(again, 5, layer, "s1") is not hub  # a new hub hears the table
    await send(layer, 5, [(fanout.PUBLIC, None, "card")])
    assert again.texts == ["card"] and first.texts == [] and second.texts == []
    fanout._HUBS[5].close()


async def test_a_join_puts_the_hub_back_in_a_group_it_lost(layer) -> None:
    old = RecordingSocket()
    hub = await fanout.join(old, 9, layer, "s1")
    # What Redis restarted empty does to the membership:
    await layer.group_discard(fanout.table_group(9), hub.channel)
    new = RecordingSocket()
    assert await fanout.join(new, 9, layer, "s2") is hub
    await send(layer, 9, [(fanout.PUBLIC, None, "card")])
    assert old.texts == ["card"] and new.texts == ["card"]
    hub.close()


class FailingLayer(InMemoryChannelLayer):
    """The in-memory layer, made to fail the way a lost Redis connection does."""

    broken = False

    async def receive(self, channel):
        while not self.broken:
            await asyncio.sleep(0.01)
        raise ConnectionError("the channel layer's server went away")


async def test_a_failing_layer_closes_the_sockets_so_stations_rejoin() -> None:
    layer = FailingLayer()
    s1, s2 = RecordingSocket(), RecordingSocket()
    hub = await fanout.join(s1, 4, layer, "s1")
    await fanout.join(s2, 4, layer, "s2")
    layer.broken = True
    for _ in range(100):
        if hub.closed:
            break
        await asyncio.sleep(0.01)
    assert hub.closed
    assert s1.closed_with == s2.closed_with == fanout.CLOSE_TRY_AGAIN
    layer.broken = False
    rejoined = RecordingSocket()
    assert await fanout.join(rejoined, 4, layer, "s1") is not hub
    fanout._HUBS[4].close()


async def test_a_hub_from_another_event_loop_or_layer_is_replaced(layer) -> None:
    socket = RecordingSocket()
    hub = await fanout.join(socket, 6, layer, "s1")
    other = InMemoryChannelLayer()
    newer = await fanout.join(RecordingSocket(), 6, other, "s1")
    assert newer is not hub and hub.closed and newer.layer is other
    newer.close()


def test_a_send_that_fails_is_logged_and_the_commit_stands(monkeypatch, caplog) -> None:
    class NoSendLayer(InMemoryChannelLayer):
        async def group_send(self, group, message):
            raise ConnectionError("the channel layer's server went away")

    monkeypatch.setattr(broadcast, "get_channel_layer", NoSendLayer)
    monkeypatch.setattr(broadcast, "_SERVER_LOOP", None)
    broadcast.publish(2, 8, 1, [Notice("public", {"type": "card", "card": "9H"})])  # no raise
    assert "events for table.2 not sent" in caplog.text


def test_a_commits_frames_are_not_copied_in_memory_and_travel_over_redis_as_lists() -> None:
    """The in-memory layer deep-copies each message for each group member: the frames, texts
    nothing changes, stay the same object. Redis' layer packs them with msgpack, as lists."""
    frames = [(fanout.PUBLIC, None, "card"), (fanout.STATION, "s1", "hand")]
    message = fanout.frames_message(frames)
    copied = copy.deepcopy(message)
    assert copied is not message and copied["frames"] is message["frames"]
    assert list(copied["frames"]) == frames
    unpacked = msgpack.unpackb(msgpack.packb(message, use_bin_type=True), raw=False)
    assert unpacked == {
        "type": fanout.MESSAGE_TYPE,
        "frames": [["table", None, "card"], ["station", "s1", "hand"]],
    }
