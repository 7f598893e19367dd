"""A session ended in one process closes sockets held by other server processes within a
second (issue 17, requirement 3): two daphne processes on PostgreSQL and Redis; the change
is made here, a third process, as an admin's save would be."""

import os
import time

import pytest
from django.db import connection
from websockets.exceptions import ConnectionClosed

from bench.loopback import start_daphne
from stations.models import Station
from tablehub.loopback import free_port, wait_for_port
from tablehub.models import Jurisdiction
from tests import wsclient
from tests.fuzz.support import make_table

pytestmark = pytest.mark.services


@pytest.fixture
def servers(postgres_url, redis_url, transactional_db):
    db = connection.settings_dict
    env = os.environ | {
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": redis_url,
        "TABLEHUB_TIMERS": "none",
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
    }
    ports = [free_port(), free_port()]
    processes = [start_daphne(port, env) for port in ports]
    try:
        for port, process in zip(ports, processes, strict=True):
            wait_for_port(port, process=process)
        yield ports
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait(timeout=10)


def close_code_within(client: wsclient.Client, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            client.ws.recv(timeout=max(deadline - time.monotonic(), 0.01))
        except TimeoutError:
            break
        except ConnectionClosed as closed:
            assert closed.rcvd is not None
            return closed.rcvd.code
    raise AssertionError("the socket was not closed in time")


def test_a_new_credential_or_reader_key_closes_sockets_on_other_processes(servers):
    port_a, port_b = servers
    table = make_table("t1", "reader", {"s1": "s1"}, Jurisdiction.objects.create(code="wa"))
    station = wsclient.Client(port_a, f"/ws/tables/{table.pk}/station/")
    station.connect()
    station.send({"type": "join", "client_id": "j", "station": "s1", "credential": "s1"})
    assert station.until(lambda f: f.get("client_id") == "j")["ok"]
    reader = wsclient.Client(port_b, f"/ws/tables/{table.pk}/shoe/")
    reader.connect()
    reader.send({"type": "hello", "key": "reader"})
    assert reader.until(lambda f: f.get("type") == "hello")["ok"]

    s1 = Station.objects.get(table=table, name="s1")
    s1.set_credential("s1-new")
    s1.save()
    assert close_code_within(station, 1.0) == 4401
    table.set_reader_key("reader-new")
    table.save()
    assert close_code_within(reader, 1.0) == 4401
