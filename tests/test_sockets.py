"""How the server's connections read and write (tablehub/sockets.py), on a real Twisted TCP
connection with a real (not running) reactor: bytes read are handed on with the time the
kernel received them, not the time they were read; a write with nothing waiting leaves at
once and registers nothing with the reactor; what the socket cannot take, and everything
written after it, waits in Twisted's buffer and leaves in order; a closing connection is
Twisted's alone. And the receipts register's watermark (rounds/receipts.py): once a loop
serving sockets has come round twice after a moment, every frame that reached the machine
before it has been read. Every websocket test with a live server runs on all of it too."""

import asyncio
import socket
import threading
import time

import pytest
from twisted.internet import tcp
from twisted.internet.protocol import Protocol
from twisted.internet.selectreactor import SelectReactor

from rounds import receipts
from tablehub import sockets


class Stamps(Protocol):
    """Keeps each piece of data with the receipt time it was handed on with."""

    def __init__(self) -> None:
        self.received: list[tuple[bytes, float | None]] = []

    def dataReceived(self, data: bytes) -> None:  # noqa: N802 (Twisted's name)
        self.received.append((data, sockets.receipt_time()))


@pytest.fixture
def tcp_pair():
    """A TCP connection of Twisted's (the server's side) and its peer, on 127.0.0.1."""
    sockets.install()
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    listener.close()
    protocol = Stamps()
    connection = tcp.Connection(server, protocol, SelectReactor())
    connection.connected = 1
    yield connection, protocol, client
    server.close()
    client.close()


def test_bytes_read_late_carry_the_time_the_kernel_received_them(tcp_pair):
    connection, protocol, client = tcp_pair
    client.sendall(b"GET /ws/ HTTP/1.1")  # the upgrade: the first read turns the times on
    for _ in range(100):  # Linux starts keeping them for the machine a moment later
        time.sleep(0.02)
        connection.doRead()
        if protocol.received[-1][1] is not None:
            break
        client.sendall(b"\r\n")
    protocol.received.clear()
    sent = time.time()
    client.sendall(b'{"type": "decide"}')
    time.sleep(0.2)  # the event loop is busy elsewhere
    read = time.time()
    connection.doRead()
    [(data, stamp)] = protocol.received
    assert data == b'{"type": "decide"}'
    assert stamp is not None and sent - 0.001 <= stamp <= sent + 0.05 < read
    assert sockets.receipt_time() is None  # only while the bytes are handled


def test_a_peer_that_closed_is_a_connection_done(tcp_pair):
    connection, protocol, client = tcp_pair
    client.close()
    time.sleep(0.05)
    assert connection.doRead() is not None  # Twisted's CONNECTION_DONE
    assert protocol.received == []


def test_a_frame_that_arrived_before_a_moment_is_registered_once_the_loop_came_round():
    """The receipts publisher's watermark: ``_read_since(at)`` is true only once the loop
    has read, and registered, every frame that reached the machine before ``at``."""
    loop = asyncio.new_event_loop()
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    server.setblocking(False)
    registered: list[int] = []
    busy = threading.Event()

    def on_read() -> None:
        server.recv(100)
        registered.append(receipts.queued(999_010, time.time()))

    def hold_the_loop() -> None:
        busy.set()
        time.sleep(0.3)  # a long callback: a burst's fan-out

    loop.add_reader(server.fileno(), on_read)
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    try:
        time.sleep(0.05)
        loop.call_soon_threadsafe(hold_the_loop)
        busy.wait(5)
        client.sendall(b"answer")  # reaches the machine while the loop is busy
        at = time.time()
        assert not receipts.read_since([loop], at, 0.1)  # the loop has not come round yet
        assert receipts.read_since([loop], at, 5)
        assert registered  # read and registered before the watermark passed it
    finally:
        for token in registered:
            receipts.dequeued(999_010, token)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
        for s in (listener, client, server):
            s.close()


@pytest.fixture
def pair():
    sockets.install()
    server, client = socket.socketpair()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # fills with little
    reactor = SelectReactor()
    connection = tcp.Connection(server, Protocol(), reactor)
    connection.connected = 1
    client.settimeout(5)
    yield connection, client, reactor
    server.close()
    client.close()


def read_all(client: socket.socket) -> bytes:
    client.setblocking(False)
    chunks = []
    while True:
        try:
            chunk = client.recv(1 << 20)
        except BlockingIOError:
            break
        chunks.append(chunk)
    client.settimeout(5)
    return b"".join(chunks)


def test_a_write_with_nothing_waiting_leaves_at_once(pair):
    connection, client, reactor = pair
    connection.write(b"frame one")
    connection.write(b"frame two")
    assert client.recv(100) == b"frame oneframe two"
    assert connection not in reactor.getWriters()  # no reactor turn needed


def test_what_the_socket_cannot_take_waits_and_everything_leaves_in_order(pair):
    connection, client, reactor = pair
    big = bytes(range(256)) * 4096  # 1 MiB: far more than the socket takes at once
    connection.write(big)
    assert connection in reactor.getWriters()  # the rest waits for the reactor
    connection.write(b"after")  # written while data waits: behind it, not at once
    connection.write(b"and after")
    received = b""
    for _ in range(10_000):
        received += read_all(client)
        if connection not in reactor.getWriters():
            break
        connection.doWrite()  # the reactor's turn: the socket is writable again
    received += read_all(client)
    assert received == big + b"afterand after"
    connection.write(b"at once again")  # all sent: the shortcut applies again
    assert client.recv(100) == b"at once again"
    assert connection not in reactor.getWriters()


def test_a_closing_connection_is_left_to_twisted(pair):
    connection, client, reactor = pair
    connection.disconnecting = True
    connection.write(b"last words")
    assert connection in reactor.getWriters()  # buffered, written by the reactor
    assert read_all(client) == b""


def test_a_peer_gone_leaves_the_error_to_twisted(pair):
    connection, client, reactor = pair
    client.close()
    for _ in range(3):  # the first send may still succeed; then the socket fails
        connection.write(b"x" * 100_000)
    assert connection in reactor.getWriters()  # the reactor's write finds the error
    assert connection.doWrite() is not None  # and reports the connection lost
