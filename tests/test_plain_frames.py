"""A station's text frames read without autobahn's work per frame (tablehub/plain_frames.py):
on daphne's own websocket protocol over Twisted's in-memory transport, whatever the bytes
(plain text frames, pings, closes, binary, fragmented, cut across reads, too long, not
UTF-8, unmasked, lengths not in their shortest form), the messages handed to the
application, the bytes written back and the connection's state are those of autobahn's own
reading, and plain frames are read without it."""

import asyncio
import os
import struct

import pytest
from autobahn.twisted.websocket import WebSocketServerProtocol
from daphne.ws_protocol import WebSocketFactory, WebSocketProtocol
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet.address import IPv4Address
from twisted.internet.testing import StringTransport

from tablehub import plain_frames

TEXT, BINARY, CONTINUATION, CLOSE, PING, PONG = 1, 2, 0, 8, 9, 10


def frame(
    opcode: int,
    payload: bytes,
    *,
    fin: bool = True,
    masked: bool = True,
    rsv: int = 0,
    long_length: bool = False,
) -> bytes:
    """A client's websocket frame (RFC 6455, 5.2), masked with a random key unless told."""
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    bit = 0x80 if masked else 0
    n = len(payload)
    if n < 126 and not long_length:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class Transport(StringTransport):
    """Twisted's in-memory transport, letting go of a producer it has not got, as a TCP
    connection does (autobahn drops a failed connection that way)."""

    def unregisterProducer(self) -> None:
        self.producer = None


def open_protocol(max_message: int = 0) -> tuple[WebSocketProtocol, Transport, list]:
    """Daphne's websocket protocol with daphne's options, as it is once the handshake is
    done: writing to memory, its application's messages kept in a list."""
    factory = WebSocketFactory(None, server="Daphne")
    factory.setProtocolOptions(
        allowNullOrigin=True,
        openHandshakeTimeout=0,
        closeHandshakeTimeout=0,
        maxMessagePayloadSize=max_message,
        maxFramePayloadSize=max_message,
    )
    protocol = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 1))
    transport = Transport()
    protocol.makeConnection(transport)
    protocol.state = WebSocketProtocol.STATE_OPEN  # the handshake, done, as autobahn ends it
    protocol.inside_message, protocol.current_frame = False, None
    protocol.websocket_version, protocol.path = 13, b"/ws/tables/1/station/"  # RFC 6455
    protocol.client_addr = ["127.0.0.1", 1]
    received: list = []
    protocol.application_queue = asyncio.Queue()
    protocol.application_queue.put_nowait = received.append
    return protocol, transport, received


def read_both(reads: list[bytes], max_message: int = 0):
    """The same reads through autobahn alone and through plain_frames: each side's messages,
    bytes written back, and its state, closing code and whether the TCP connection is
    being dropped."""
    plain_frames.install()
    sides = []
    for read in (WebSocketServerProtocol.dataReceived, WebSocketProtocol.dataReceived):
        protocol, transport, received = open_protocol(max_message)
        for data in reads:
            if protocol.state != WebSocketProtocol.STATE_CLOSED:
                read(protocol, data)
        closed = (protocol.state, protocol.localCloseCode, transport.disconnecting)
        sides.append((received, transport.value(), closed))
    return sides


def closing_code(written: bytes) -> int | None:
    """The status code of the close frame the server wrote (None: none)."""
    at = written.find(b"\x88")
    return struct.unpack("!H", written[at + 2 : at + 4])[0] if at >= 0 else None


def text(message: dict) -> str:
    return message["text"]


def test_a_decision_is_handed_to_daphne_without_autobahn(monkeypatch) -> None:
    plain_frames.install()
    protocol, transport, received = open_protocol()

    def autobahn_read(self, data):
        raise AssertionError("read by autobahn")

    monkeypatch.setattr(WebSocketServerProtocol, "_dataReceived", autobahn_read)
    decide, ping = b'{"type": "decide", "decision": "hit"}', '{"type": "ping", "client_id": "é"}'
    WebSocketProtocol.dataReceived(
        protocol, frame(TEXT, decide) + frame(TEXT, ping.encode()) + frame(TEXT, b"x" * 300)
    )
    assert [text(m) for m in received] == [decide.decode(), ping, "x" * 300]
    assert transport.value() == b""


def cut(data: bytes, *at: int) -> list[bytes]:
    """``data`` as the reads a connection gets it in, cut at ``at``."""
    points = [0, *at, len(data)]
    return [data[a:b] for a, b in zip(points, points[1:], strict=False)]


CASES = {
    "one text frame": [frame(TEXT, b'{"type": "bet"}')],
    "three in one read": [frame(TEXT, b"a") + frame(TEXT, "é".encode() * 100) + frame(TEXT, b"")],
    "cut across reads": cut(frame(TEXT, b"0123456789" * 20) + frame(TEXT, b"x"), 9, 205),
    "a text, a ping, a text": [frame(TEXT, b"a") + frame(PING, b"p") + frame(TEXT, b"b")],
    "fragmented": [frame(TEXT, b"ab", fin=False) + frame(CONTINUATION, b"cd") + frame(TEXT, b"e")],
    "binary": [frame(BINARY, b"\x00\xff") + frame(TEXT, b"after")],
    "not UTF-8": [frame(TEXT, b"ok") + frame(TEXT, b"\xff\xfe") + frame(TEXT, b"never")],
    "UTF-8 cut inside a character": [frame(TEXT, "é".encode()[:1])],
    "unmasked": [frame(TEXT, b"a", masked=False)],
    "length not in its shortest form": [frame(TEXT, b"short", long_length=True)],
    "64-bit length": [frame(TEXT, b"y" * 70000)],
    "compressed bit without compression": [frame(TEXT, b"a", rsv=4)],
    "a close": [frame(TEXT, b"last") + frame(CLOSE, struct.pack("!H", 1000))],
    "a pong": [frame(PONG, b"") + frame(TEXT, b"z")],
}


@pytest.mark.parametrize("reads", CASES.values(), ids=CASES.keys())
def test_whatever_the_bytes_the_outcome_is_autobahns(reads: list[bytes]) -> None:
    autobahn, plain = read_both(reads)
    assert plain == autobahn


def test_the_cases_cover_what_they_name() -> None:
    """The comparison above is not vacuous: autobahn hands on texts, answers a ping, echoes a
    close and drops a connection that breaks the protocol (its default, ``failByDrop``)."""
    three = read_both(CASES["three in one read"])[1][0]
    assert [text(m) for m in three] == ["a", "é" * 100, ""]
    cut_across = read_both(CASES["cut across reads"])[1][0]
    assert [text(m) for m in cut_across] == ["0123456789" * 20, "x"]
    assert [text(m) for m in read_both(CASES["fragmented"])[1][0]] == ["abcd", "e"]
    assert read_both(CASES["a text, a ping, a text"])[1][1] == b"\x8a\x01p"  # the pong
    assert closing_code(read_both(CASES["a close"])[1][1]) == 1000
    dropped = (WebSocketProtocol.STATE_CLOSED, None, True)
    for broken in ("not UTF-8", "unmasked", "length not in its shortest form"):
        assert read_both(CASES[broken])[1][2] == dropped, broken
    assert [text(m) for m in read_both(CASES["not UTF-8"])[1][0]] == ["ok"]


def test_a_frame_over_the_servers_limit_is_refused_as_autobahn_refuses_it() -> None:
    reads = [frame(TEXT, b"fits") + frame(TEXT, b"q" * 200)]
    autobahn, plain = read_both(reads, max_message=100)
    assert plain == autobahn
    assert [text(m) for m in plain[0]] == ["fits"]
    assert plain[2] == (WebSocketProtocol.STATE_CLOSED, None, True)  # dropped at once


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frames=st.lists(
        st.one_of(
            st.text(max_size=200).map(lambda t: frame(TEXT, t.encode())),
            st.binary(max_size=40).map(lambda b: frame(TEXT, b)),  # UTF-8 or not
            st.binary(max_size=20).map(lambda b: frame(PING, b)),
            st.binary(max_size=20).map(lambda b: frame(BINARY, b)),
            st.text(max_size=20).map(lambda t: frame(TEXT, t.encode(), fin=False)),
            st.text(max_size=20).map(lambda t: frame(CONTINUATION, t.encode())),
        ),
        max_size=8,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=4),
)
def test_any_frames_cut_anywhere_read_as_autobahn_reads_them(frames, cuts) -> None:
    data = b"".join(frames)
    points = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    reads = [data[a:b] for a, b in zip(points, points[1:], strict=False)]
    autobahn, plain = read_both(reads)
    assert plain == autobahn
