"""Frames for the clients written straight to their connections, framed once for all.

A frame a consumer sends goes through channels' ``send``, daphne's server and protocol
(``handle_reply``, ``serverSend``) and autobahn's ``sendMessage``, ``sendFrame`` and
``sendData``, which also formats a debug line's arguments (with colours) and counts octets
whether or not anything is logged: about as much work as writing the frame itself. A card
for 1000 stations paid it 1000 times for one text (py-spy, docs/benchmarks.md).

``DirectSend`` (ASGI middleware on the websocket routes) gives each daphne connection a
``FrameWriter`` in its scope (``WRITER``). A frame is framed once (``Outgoing``: the text
and its websocket frame, built by autobahn's ``PreparedMessage``, the library's own means of
a broadcast) and written to each connection's transport, in the order of every other write
to it. Where the connection is not in the plain state that allows it (not open yet or
closing, compression negotiated, autobahn holding frames of its own), ``write`` says no and
the caller sends the usual way; a connection started any other way (channels' test
communicator) has no writer.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from autobahn.websocket.protocol import PreparedMessage, WebSocketProtocol
from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol as DaphneProtocol

WRITER = "tablehub.frame_writer"  # the scope's key


class Outgoing:
    """Text frames for one or many connections: the texts and their frames (a server's
    frames are not masked: the same bytes fit every connection)."""

    __slots__ = ("texts", "frame")

    def __init__(self, text: str) -> None:
        self.texts: tuple[str, ...] = (text,)
        message = PreparedMessage(text.encode("utf-8"), False, False, True)
        self.frame: bytes = message.payloadHybi

    @classmethod
    def together(cls, parts: Sequence[Outgoing]) -> Outgoing:
        """The frames of ``parts`` for one connection, in their order, written with one send."""
        if len(parts) == 1:
            return parts[0]
        joined = cls.__new__(cls)
        joined.texts = tuple(text for part in parts for text in part.texts)
        joined.frame = b"".join(part.frame for part in parts)
        return joined


class FrameWriter:
    """Writes framed text to one daphne websocket connection, when it is plainly open."""

    __slots__ = ("protocol",)

    def __init__(self, protocol: DaphneProtocol) -> None:
        self.protocol = protocol

    def write(self, outgoing: Outgoing) -> bool:
        """Write the frame now; False (nothing written) when it must go the usual way."""
        protocol = self.protocol
        if (
            protocol.state != WebSocketProtocol.STATE_OPEN
            or protocol._perMessageCompress is not None
            or protocol.send_queue
            or protocol.transport is None
        ):
            return False
        protocol.transport.write(outgoing.frame)
        return True


def daphne_protocol(send: Any) -> DaphneProtocol | None:
    """The connection behind an ASGI ``send`` that daphne made (``partial(server.handle_reply,
    protocol)``), else None."""
    if not isinstance(send, functools.partial) or not send.args:
        return None
    if not isinstance(getattr(send.func, "__self__", None), Server):
        return None
    protocol = send.args[0]
    return protocol if isinstance(protocol, DaphneProtocol) else None


class DirectSend:
    """ASGI middleware for the websocket routes: a ``FrameWriter`` in each daphne
    connection's scope."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        protocol = daphne_protocol(send) if scope.get("type") == "websocket" else None
        if protocol is not None:
            scope = {**scope, WRITER: FrameWriter(protocol)}
        return await self.app(scope, receive, send)
