"""How the server's TCP connections read and write (daphne serves them with Twisted).

**Receipt time from the kernel.** Receipt time decides whether a station's answer was on
time (rounds/receipts.py). An event loop busy with a burst reads a frame some milliseconds
after it reached the machine, and an answer sent just before the deadline was then stamped
after it. ``install`` makes each connection read with ``recvmsg`` and the socket option
``SO_TIMESTAMPNS``: the kernel tells when the bytes arrived (the machine's clock, as
``time.time()``), and ``receipt_time`` gives that time to whatever the bytes are handed to,
while they are handled (tablehub/frame_stamps.py stamps the frames with it). Bytes that
arrived in several packets carry the time of the last one: a frame is never stamped earlier
than it was received. Where the kernel kept no time (a connection's first read, a
websocket's upgrade, turns the option on, and Linux starts keeping times a moment after
the first socket of the machine asks; or not Linux), frames are stamped when read.

**Frames written at once.** Twisted buffers every write and registers the socket for
writing with its asyncio reactor (an ``epoll_ctl`` and a new selector key), writes it on a
later turn of the loop, and unregisters it (the same again). A card's fan-out to 1000
stations paid that for each frame, about half of the event loop's time in the fan-out
(py-spy, docs/benchmarks.md), where asyncio's own transports simply send. A plain
connection with nothing waiting to be written now sends at once; what the socket does not
take at once (a slow reader, a full buffer), and anything written while earlier data waits,
goes Twisted's way, in order. A connection closing, on TLS, or failing to send is left to
Twisted: its own write finds the error and loses the connection as it always did.

Both change Twisted's ``tcp.Connection`` in this process; where that class lacks what they
read (another Twisted release), it is left as it is.
"""

from __future__ import annotations

import socket
import struct
import sys
from errno import EWOULDBLOCK
from typing import Any

from twisted.internet import abstract, main, tcp

# SO_TIMESTAMPNS: Python names it on no platform; Linux's number (asm-generic/socket.h).
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35 if sys.platform == "linux" else None)
_TIMESPEC = struct.Struct("@qq")  # the kernel's struct timespec: seconds, nanoseconds
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size)

_installed = False
_receipt: float | None = None  # when the bytes being handled now reached the machine


def receipt_time() -> float | None:
    """When the bytes being handled right now arrived (epoch seconds, the kernel's clock),
    if they are being handled under a connection's read; None otherwise."""
    return _receipt


def install() -> None:
    """Read with the kernel's receipt time, and write at once (idempotent)."""
    global _installed
    connection = tcp.Connection
    known = ("TLS", "dataBuffer", "offset", "_writeDisconnected", "disconnecting", "doRead")
    buffers = abstract.FileDescriptor.__init__.__code__.co_names  # _tempDataBuffer is set there
    if _installed or "_tempDataBuffer" not in buffers:
        return
    if not all(hasattr(connection, name) for name in known):
        return
    connection.write = _write_at_once(connection.write)  # type: ignore[method-assign]
    if SO_TIMESTAMPNS is not None:
        connection.doRead = _read_stamped(connection.doRead)  # type: ignore[method-assign]
    _installed = True


def _write_at_once(buffered: Any) -> Any:
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

    return write


def _read_stamped(plain: Any) -> Any:
    def doRead(self: Any) -> Any:  # noqa: N802 (Twisted's name)
        stamped = self.__dict__.get("_tablehub_stamped")
        if stamped is None:
            try:
                self.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                stamped = True
            except OSError:  # not a socket that keeps times (a Unix socket on some systems)
                stamped = False
            self.__dict__["_tablehub_stamped"] = stamped
        if not stamped:
            return plain(self)
        try:
            data, ancillary, _flags, _address = self.socket.recvmsg(self.bufferSize, _ANCILLARY)
        except OSError as error:  # as Twisted's own read
            if error.args[0] == EWOULDBLOCK:
                return None
            return main.CONNECTION_LOST
        global _receipt
        _receipt = _kernel_time(ancillary)
        try:
            return self._dataReceived(data)
        finally:
            _receipt = None

    return doRead


def _kernel_time(ancillary: list[tuple[int, int, bytes]]) -> float | None:
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
            seconds, nanoseconds = _TIMESPEC.unpack_from(payload)
            return seconds + nanoseconds / 1e9
    return None
