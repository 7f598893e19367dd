"""Frames written at once (tablehub/socket_writes.py), on a real Twisted TCP connection over
a socket pair, with a real (not running) reactor: a write with nothing waiting leaves at
once and registers nothing with the reactor; what the socket cannot take, and everything
written after it, waits in Twisted's buffer and leaves in order; a closing connection is
Twisted's alone. Every websocket test with a live server runs on it too."""

import socket

import pytest
from twisted.internet import tcp
from twisted.internet.protocol import Protocol
from twisted.internet.selectreactor import SelectReactor

from tablehub import socket_writes


@pytest.fixture
def pair():
    socket_writes.install()
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
