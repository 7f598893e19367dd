"""Frames written straight to the connection (tablehub/direct_send.py): on daphne's own
websocket protocol over Twisted's in-memory transport, a frame framed once is byte for byte
what autobahn's usual send writes, and it is written only while the connection is plainly
open (not before the handshake, not closing, not with compression, not behind frames
autobahn holds); on the real server every station socket has a writer, and a station that
joins gets its replies and the table's events through it."""

import asyncio
import functools
import json

import pytest
import websockets
from asgiref.sync import sync_to_async
from daphne.server import Server
from daphne.ws_protocol import WebSocketFactory, WebSocketProtocol
from twisted.internet.address import IPv4Address
from twisted.internet.testing import StringTransport
from websockets.typing import Origin

from rounds.engine import Notice
from stations.models import Station
from tablehub import broadcast, direct_send, fanout
from tablehub.models import Jurisdiction, Table
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)

TEXTS = ['{"type": "reply", "ok": true}', "é" * 200, "x" * 70000]  # 7-, 16- and 64-bit lengths


def open_protocol() -> tuple[WebSocketProtocol, StringTransport]:
    """Daphne's websocket protocol, made by daphne's factory with daphne's options, as it is
    once the handshake is done, writing to memory."""
    factory = WebSocketFactory(None, server="Daphne")
    factory.setProtocolOptions(allowNullOrigin=True, openHandshakeTimeout=0)  # no timer
    protocol = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 1))
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.state = WebSocketProtocol.STATE_OPEN  # the handshake, done
    protocol.client_addr = ["127.0.0.1", 1]
    return protocol, transport


@pytest.mark.parametrize("text", TEXTS)
def test_a_frame_framed_once_is_what_autobahn_would_write(text: str) -> None:
    usual, usual_written = open_protocol()
    usual.sendMessage(text.encode("utf-8"), False)

    direct, written = open_protocol()
    assert direct_send.FrameWriter(direct).write(direct_send.Outgoing(text))
    assert written.value() == usual_written.value()
    assert written.value()[:1] == b"\x81"  # one final text frame, not masked


@pytest.mark.parametrize(
    "change",
    [
        lambda p: setattr(p, "state", WebSocketProtocol.STATE_CONNECTING),
        lambda p: setattr(p, "state", WebSocketProtocol.STATE_CLOSING),
        lambda p: setattr(p, "state", WebSocketProtocol.STATE_CLOSED),
        lambda p: setattr(p, "_perMessageCompress", object()),
        lambda p: p.send_queue.append((b"held", False)),
        lambda p: setattr(p, "transport", None),
    ],
    ids=["connecting", "closing", "closed", "compressed", "frames held", "no transport"],
)
def test_nothing_is_written_straight_unless_the_connection_is_plainly_open(change) -> None:
    protocol, transport = open_protocol()
    change(protocol)
    assert not direct_send.FrameWriter(protocol).write(direct_send.Outgoing("card"))
    assert transport.value() == b""


def test_only_daphnes_send_has_a_connection_behind_it() -> None:
    protocol, _ = open_protocol()
    server = Server(application=None, endpoints=["tcp:port=0:interface=127.0.0.1"])
    assert direct_send.daphne_protocol(server_send(server, protocol)) is protocol
    assert direct_send.daphne_protocol(server_send(server, "not a protocol")) is None

    async def other_send(message):  # channels' test communicator, another server
        return None

    assert direct_send.daphne_protocol(other_send) is None


def server_send(server: Server, protocol: object):
    return functools.partial(server.handle_reply, protocol)


@pytest.mark.django_db(transaction=True)
async def test_on_the_real_server_a_stations_frames_go_straight_to_its_connection() -> None:
    from rounds.live_replay import in_process_server  # starts daphne (Twisted) once

    def set_up() -> Table:
        table = Table.objects.create(
            name="direct", jurisdiction=Jurisdiction.objects.create(code="dx", name="Direct")
        )
        station = Station(table=table, name="s1")
        station.set_credential("secret")
        station.save()
        return table

    table = await sync_to_async(set_up)()
    url = f"{in_process_server()}/ws/tables/{table.pk}/station/"
    async with websockets.connect(url, origin=Origin("http://127.0.0.1")) as ws:
        join = {"type": "join", "client_id": "j", "station": "s1", "credential": "secret"}
        await ws.send(json.dumps(join))
        reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert reply["client_id"] == "j" and reply["ok"]
        hub = fanout._HUBS[table.pk]
        (socket,) = hub.listeners
        # daphne's connection: the socket writes its frames straight to it
        assert isinstance(getattr(socket, "writer", None), direct_send.FrameWriter)

        # A table event, from the database thread's broadcast through the hub.
        burn = Notice("public", {"type": "burn", "card": "2S"})
        await asyncio.to_thread(broadcast.publish, table.pk, 1, 5, [burn])
        event = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert event["id"] == "1.5.0" and event["event"] == {"type": "burn", "card": "2S"}
        await ws.send(json.dumps({"type": "ping", "client_id": "p"}))
        pong = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert pong["client_id"] == "p" and "server_time" in pong
