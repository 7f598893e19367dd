"""A station's text frames read without autobahn's machinery per frame.

Every answer of a burst is one small text frame from a browser. Autobahn reads it through
``dataReceived`` (a debug line's arguments formatted with colours whether or not anything
is logged), ``processData``, a native XOR masker made for the frame (a C object through
cffi, which also lets go of the GIL to the database thread), a UTF-8 validator, the frame
and message hooks and an observer event nobody listens to: under py-spy about a quarter of
the event loop's time in a decision burst at 1000 stations (docs/benchmarks.md).

``install`` gives daphne's websocket protocol a ``dataReceived`` that reads the frames a
read holds itself when they are what a station sends: complete, final, masked, uncompressed
text frames of valid UTF-8 within the server's size limits, on a connection plainly open
(nothing of an earlier read buffered, no message begun, no compression, no octet or frame
logging, no timing, no listener). Each such frame is unmasked, checked as UTF-8 and handed
to daphne's ``onMessage``, as autobahn would hand it. At the first frame that is anything
else (a ping, a close, a binary or fragmented frame, one not complete in this read, one too
long, bytes that are not UTF-8), that frame and everything after it go to autobahn as
before, in order: its checks, its errors and its closing codes are untouched.

Autobahn's traffic counters (``trafficStats``, read by nothing here) do not count the
frames read this way.
"""

from __future__ import annotations

import struct
from typing import Any

from autobahn.websocket.protocol import WebSocketProtocol
from daphne.ws_protocol import WebSocketProtocol as DaphneProtocol

_installed = False
_OPEN = WebSocketProtocol.STATE_OPEN
_FINAL_TEXT = 0x81  # FIN, no RSV bits, opcode 1 (text)
_LENGTH_16 = struct.Struct("!H")


def install() -> None:
    """Read plain text frames directly on every daphne websocket connection (idempotent)."""
    global _installed
    if _installed:
        return
    read_by_autobahn = DaphneProtocol.dataReceived
    DaphneProtocol.dataReceived = _reading_plain_frames(read_by_autobahn)
    _installed = True


def _reading_plain_frames(read_by_autobahn: Any) -> Any:
    def dataReceived(self: Any, data: bytes) -> None:  # noqa: N802 (Twisted's name)
        done = read_plain_frames(self, data) if _plainly_open(self) else 0
        if done < len(data):
            read_by_autobahn(self, data[done:] if done else data)

    return dataReceived


def _plainly_open(protocol: Any) -> bool:
    return (
        protocol.state == _OPEN
        and not protocol.data
        and protocol.current_frame is None
        and not protocol.inside_message
        and protocol._perMessageCompress is None
        and not protocol.failedByMe
        and not protocol.logOctets
        and not protocol.logFrames
        and not protocol.trackedTimings
        and not protocol._listeners
    )


def read_plain_frames(protocol: Any, data: bytes) -> int:
    """Hand each plain text frame at the start of ``data`` to ``protocol.onMessage``; how
    many bytes those frames took (the rest is for autobahn)."""
    at, size = 0, len(data)
    frame_limit, message_limit = protocol.maxFramePayloadSize, protocol.maxMessagePayloadSize
    while size - at >= 6 and protocol.state == _OPEN:
        if data[at] != _FINAL_TEXT:
            break
        length = data[at + 1] ^ 0x80  # the mask bit must be set: then the rest is the length
        if length < 126:
            header = 6
        elif length == 126 and size - at >= 8:
            length = _LENGTH_16.unpack_from(data, at + 2)[0]
            if length < 126:  # not the shortest encoding: autobahn refuses it
                break
            header = 8
        else:  # unmasked (a protocol violation), a 64-bit length, or the header is cut
            break
        if (frame_limit and length > frame_limit) or (message_limit and length > message_limit):
            break
        end = at + header + length
        if end > size:
            break
        payload = _unmasked(data[at + header - 4 : at + header], data[at + header : end])
        try:
            payload.decode("utf-8")
        except UnicodeDecodeError:  # autobahn fails the connection with its own code
            break
        if protocol.autoPingTimeoutCall and protocol.autoPingRestartOnAnyTraffic:
            protocol._cancelAutoPingTimeoutCall()  # any data frame counts as the peer alive
        protocol.onMessage(payload, False)
        at = end
    return at


def _unmasked(mask: bytes, masked: bytes) -> bytes:
    """RFC 6455, 5.3: each octet XORed with the mask's octet at its position modulo 4."""
    length = len(masked)
    if not length:
        return b""
    key = (mask * (length // 4 + 1))[:length]
    return (int.from_bytes(masked, "big") ^ int.from_bytes(key, "big")).to_bytes(length, "big")
