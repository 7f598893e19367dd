"""Scale-out: two daphne processes share one table through Redis, and Celery fires the timers.

A station on process A sees a card scanned through process B, decisions on either process
apply to the same round, and the betting timer is closed by a Celery worker. Everything runs
on 127.0.0.1, bounded in time. Needs PostgreSQL and Redis (runs in CI, skips locally
without them).
"""

import os
import time
import urllib.request

import pytest
from django.db import connection

from bench.loopback import start_daphne, start_worker
from payouts import ledger
from rounds import receipts, writer
from rounds.engine import RuleSet
from rounds.models import Round
from stations.models import Station
from stations.services import cash_in
from tablehub.loopback import free_port, wait_for_port
from tablehub.models import Jurisdiction, Table, TableConfig
from tests import wsclient

pytestmark = pytest.mark.services
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def cluster(postgres_url, redis_url, transactional_db):
    """Two daphne processes and a Celery worker on the test database."""
    db = connection.settings_dict
    env = os.environ | {
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": redis_url,
        "TABLEHUB_TIMERS": "celery",
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
    }
    ports = [free_port(), free_port()]
    processes = [start_daphne(port, env) for port in ports]
    metrics_port = free_port()
    processes.append(start_worker(env | {"TABLEHUB_WORKER_METRICS_PORT": str(metrics_port)}))
    try:
        for port, process in zip(ports, processes[: len(ports)], strict=True):
            wait_for_port(port, process=process)
        wait_for_port(metrics_port, process=processes[-1])
        yield ports + [metrics_port]
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait(timeout=10)


class Client(wsclient.Client):
    def __init__(self, port: int, path: str) -> None:
        super().__init__(port, path)
        self.connect()

    def ask(self, message: dict) -> dict:
        self.send(message)
        return self.until(
            lambda f: (
                f.get("type") in ("reply", "hello", "scan")
                and f.get("client_id", message.get("client_id")) == message.get("client_id")
            )
        )

    def close(self) -> None:
        self.drop()


def wait_for_phase(round_id: int, phase: str, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if Round.objects.get(pk=round_id).phase == phase:
            return
        time.sleep(0.2)
    raise AssertionError(f"round {round_id} never reached {phase}")


def test_two_server_processes_share_one_table(cluster, settings):
    settings.TABLEHUB_TIMERS = "celery"  # open_round here schedules the betting timer
    port_a, port_b, worker_metrics = cluster
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="stadium", jurisdiction=jurisdiction)
    table.set_reader_key("reader")
    table.save()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=1).to_dict(),
        timers={"betting": 2, "decision": 20},
    )
    for name in ("s1", "s2"):
        station = Station(table=table, name=name)
        station.set_credential(name)
        station.save()
        cash_in(station, "100", key="start")

    s1 = Client(port_a, f"/ws/tables/{table.pk}/station/")  # process A
    s2 = Client(port_b, f"/ws/tables/{table.pk}/station/")  # process B
    assert s1.ask({"type": "join", "client_id": "j", "station": "s1", "credential": "s1"})["ok"]
    assert s2.ask({"type": "join", "client_id": "j", "station": "s2", "credential": "s2"})["ok"]
    # Each process publishes what it has received and not finished with, so that the
    # Celery worker's expiry waits for it (rounds/receipts.py).
    assert len(receipts.publishers(time.time())) >= 2
    round = writer.open_round(table)
    assert s1.ask({"type": "place", "client_id": "b", "box": 1, "amount": "10"})["ok"]
    assert s2.ask({"type": "place", "client_id": "b", "box": 2, "amount": "10"})["ok"]
    wait_for_phase(round.pk, Round.Phase.DEAL)  # the Celery worker closed bets on time

    shoe = Client(port_b, f"/ws/tables/{table.pk}/shoe/")  # the reader talks to process B
    assert shoe.ask({"type": "hello", "key": "reader"})["ok"]
    for seq, card in enumerate(["TS", "9S", "9C", "TH", "8S", "8C"], start=1):
        shoe.send({"type": "card", "seq": seq, "card": card})
        assert shoe.until(lambda f: f.get("type") == "scan")["ok"]
    s1.until(lambda f: f.get("event", {}).get("card") == "9C")  # scanned via B, seen on A

    assert s1.ask({"type": "decide", "client_id": "d", "action": "stand"})["ok"]  # on A
    assert s2.ask({"type": "decide", "client_id": "d", "action": "stand"})["ok"]  # on B
    wait_for_phase(round.pk, Round.Phase.SETTLED)  # the dealer's 9 8 stands on 17
    s1.until(lambda f: f.get("event", {}).get("type") == "round_over")
    assert ledger.balance(Station.objects.get(name="s1")) == 110  # 20 beats 17
    assert ledger.balance(Station.objects.get(name="s2")) == 100  # 17 pushes

    # Metrics (docs/operations.md): the worker counted the betting timer it fired; each
    # server process counts its own joined stations.
    assert metric(worker_metrics, 'tablehub_timer_lateness_seconds_count{step="betting"}') == 1
    here = f'tablehub_connected_stations{{table="{table.pk}"}}'
    assert metric(port_a, here) == metric(port_b, here) == 1
    for client in (s1, s2, shoe):
        client.close()


def metric(port: int, sample: str) -> float:
    """One sample of http://127.0.0.1:PORT/metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    values = [line.rsplit(" ", 1)[1] for line in text.splitlines() if line.startswith(sample + " ")]
    assert len(values) == 1, (sample, text[:2000])
    return float(values[0])
