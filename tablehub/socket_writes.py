"""Frames written to the socket at once, not on the reactor's next turn.

Daphne serves websockets on Twisted's asyncio reactor. Twisted buffers every write and
registers the socket for writing (an ``epoll_ctl`` and a new selector key), writes it on a
later turn of the loop, and unregisters it (the same again). A card's fan-out to 1000
stations paid that for each frame, about half of the event loop's time in the fan-out
(py-spy, docs/benchmarks.md), where asyncio's own transports simply send.

``install`` makes a plain TCP connection send at once when nothing of it is waiting to be
written, as asyncio's transports do; what the socket does not take at once (a slow reader,
a full buffer), and anything written while earlier data waits, goes Twisted's way, in
order. A connection closing, on TLS, or failing to send is left to Twisted entirely: its
own write finds the error and loses the connection as it always did.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import abstract, tcp

_installed = False


def install() -> None:
    """Let plain TCP connections of this process send at once (idempotent). Left as it is
    where Twisted's connection lacks what the shortcut reads (another Twisted release)."""
    global _installed
    connection = tcp.Connection
    known = ("TLS", "dataBuffer", "offset", "_writeDisconnected", "disconnecting")
    buffers = abstract.FileDescriptor.__init__.__code__.co_names  # _tempDataBuffer is set there
    if _installed or "_tempDataBuffer" not in buffers:
        return
    if not all(hasattr(connection, name) for name in known):
        return
    buffered = connection.write

    def write(self: Any, data: bytes) -> None:
        if (
            data
            and self.connected
            and not self.TLS
            and not self.disconnecting
            and not self._writeDisconnected
            and not self._tempDataBuffer
            and len(self.dataBuffer) == self.offset  # nothing waiting: the order is kept
            and isinstance(data, bytes)
        ):
            try:
                sent = self.socket.send(data)
            except OSError:  # full (EAGAIN) or failed: Twisted's write takes it from here
                sent = 0
            if sent == len(data):
                return
            data = data[sent:]
        buffered(self, data)

    connection.write = write  # type: ignore[method-assign]
    _installed = True
