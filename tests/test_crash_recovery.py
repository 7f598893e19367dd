"""Crash recovery (docs/recovery.md): the server process is killed (SIGKILL) at every phase of
a round and started again on the same port; the station clients (real websockets) reconnect,
join again, get the full state and carry on; timers are armed again from their stored
deadlines; nothing is paid twice and no stake is lost. Also: a station whose connection
dies mid-round, a Celery worker killed while it holds a due timer, and Redis restarted
without its data.

The server runs as a separate process on the test database (the SQLite file of
TABLEHUB_TEST_DB, or PostgreSQL under CI). The embedded variant always runs; the Celery
ones are service tests (they run in CI, and wherever REDIS_URL is set): the server killed
at every phase uses REDIS_URL; the worker and Redis restarts use a redis-server of their
own on a free port, never a Redis they did not start. Every wait is bounded and every
process is killed in a ``finally``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import redis
from django.db.models import Sum
from django.utils import timezone
from websockets.exceptions import ConnectionClosed

from bench.loopback import start_daphne
from payouts import ledger
from payouts.models import LedgerEntry
from rounds import recovery, timers, writer
from rounds.engine import CardDrawn, Decision, RuleSet, parse_card
from rounds.models import Round, RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.loopback import free_port, wait_for_port
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import django_shell, server_env
from tests.wsclient import Client

ROOT = Path(__file__).resolve().parents[1]
READER_KEY = "reader-key"
D = Decimal


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


# -- processes --------------------------------------------------------------------------------


class Server:
    """One daphne process that can be killed and started again on the same port."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = start_daphne(self.port, self.env)
        wait_for_port(self.port, limit=30, process=self.process)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None


def celery(env: dict[str, str], *args: str) -> subprocess.Popen:
    """A Celery worker (``worker``) or beat (``beat -s FILE``) process; its log goes to the
    file CRASH_TEST_LOG names, if any (for a failure's post-mortem)."""
    log = os.environ.get("CRASH_TEST_LOG")
    logging = ["--loglevel=info", f"--logfile={log}"] if log else ["--loglevel=warning"]
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "tablehub", *args, *logging],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def worker(env: dict[str, str]) -> subprocess.Popen:
    return celery(
        env,
        "worker",
        "--pool=solo",
        "--without-heartbeat",
        "--without-gossip",
        "--without-mingle",
    )


def beat(env: dict[str, str], folder: Path) -> subprocess.Popen:
    return celery(env, "beat", "-s", str(folder / "celerybeat-schedule"))


def stop_all(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - reported, never left behind
            process.kill()


class OwnRedis:
    """A redis-server of this test's own on a free port (no persistence), which the test may
    shut down and start again: never the machine's Redis."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            message = "redis-server is not installed"
            if in_ci():
                pytest.fail(message + " and CI=true never skips this test", pytrace=False)
            pytest.skip(message)
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: self.client().ping(), limit=10, what="redis-server answers")

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=2, socket_connect_timeout=2)

    def shutdown(self) -> None:
        """``redis-cli shutdown nosave``: everything in it is gone."""
        subprocess.run(
            ["redis-cli", "-p", str(self.port), "shutdown", "nosave"],
            timeout=10,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if self.process is not None:
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


# -- clients ----------------------------------------------------------------------------------


class StationClient(Client):
    def __init__(self, server: Server, table: Table, name: str) -> None:
        super().__init__(server, f"/ws/tables/{table.pk}/station/")
        self.name = name

    def ask(self, message: dict) -> dict:
        self.sent += 1
        client_id = f"{self.name}-{self.sent}"
        self.send(message | {"client_id": client_id})
        return self.until(lambda f: f.get("type") == "reply" and f.get("client_id") == client_id)

    def join(self, limit: float = 20.0) -> dict:
        """Connect (again) and join: the station's whole state. A join the server failed on
        (``server_error``: Redis was just restarted and a pooled connection to it was dead)
        is tried again on a new connection, as a station does."""
        deadline = time.monotonic() + limit
        while True:
            self.connect(limit)
            try:
                reply = self.ask({"type": "join", "station": self.name, "credential": self.name})
            except ConnectionClosed:
                reply = {"ok": False, "error": {"code": "server_error"}}
            if reply["ok"] or reply["error"]["code"] != "server_error":
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert reply["ok"], reply
        return reply["state"]

    def decide(self, action: str) -> dict:
        reply = self.ask({"type": "decide", "action": action})
        assert reply["ok"], reply
        return reply["state"]


class ShoeClient(Client):
    def __init__(self, server: Server, table: Table) -> None:
        super().__init__(server, f"/ws/tables/{table.pk}/shoe/")

    def hello(self, limit: float = 20.0) -> None:
        deadline = time.monotonic() + limit
        while True:
            self.connect(limit)
            try:
                self.send({"type": "hello", "key": READER_KEY})
                assert self.until(lambda f: f.get("type") == "hello")["ok"]
                return
            except ConnectionClosed:  # the server failed on a dead Redis connection: again
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def card(self, seq: int, card: str) -> dict:
        self.send({"type": "card", "seq": seq, "card": card})
        reply = self.until(lambda f: f.get("type") == "scan" and f.get("seq") == seq)
        assert reply["ok"], reply
        return reply


# -- the table and the checks -----------------------------------------------------------------


def wait_for(predicate, limit: float = 20.0, what: str = "the condition"):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except Exception:  # e.g. the database or Redis not answering yet
            value = None
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {limit} s waiting for {what}")


def make_table(timers: dict[str, float], stations=("s1", "s2"), credits="100") -> Table:
    jurisdiction = Jurisdiction.objects.create(code="crash", name="Crash test")
    table = Table.objects.create(name="crash", jurisdiction=jurisdiction, is_open=True)
    table.set_reader_key(READER_KEY)
    table.save()
    TableConfig.objects.create(
        table=table, version=1, rules=RuleSet(decks=6).to_dict(), timers=timers
    )
    for name in stations:
        station = Station(table=table, name=name)
        station.set_credential(name)
        station.save()
        cash_in(station, credits, key="start")
    return table


def current_round(table: Table, phase: str | None = None) -> Round | None:
    rounds = table.rounds.exclude(phase__in=["settled", "void"]).order_by("-pk")
    if phase is not None:
        rounds = rounds.filter(phase=phase)
    return rounds.first()


def phase_of(round: Round) -> str:
    return Round.objects.get(pk=round.pk).phase


def deal_s1_16_s2_17(server, table: Table, opened_by: str):
    """Stations s1 and s2 join and bet 10 on boxes 1 and 2 of the round the server opens
    (``opened_by`` says what opens it); once the timer closes bets the reader deals s1 16,
    s2 17, the dealer 7 and a hole card. Returns (s1, s2, shoe, round)."""
    s1, s2 = StationClient(server, table, "s1"), StationClient(server, table, "s2")
    shoe = ShoeClient(server, table)
    s1.join()
    s2.join()
    round = wait_for(lambda: current_round(table, "betting"), what=opened_by)
    assert s1.ask({"type": "place", "box": 1, "amount": "10"})["ok"]
    assert s2.ask({"type": "place", "box": 2, "amount": "10"})["ok"]
    wait_for(lambda: phase_of(round) == "deal", what="the timer closing bets")
    shoe.hello()
    for seq, card in enumerate(["TS", "9H", "7C", "6D", "8S", "9C"], start=1):
        shoe.card(seq, card)
    return s1, s2, shoe, round


def assert_the_books_balance(table: Table, credits: dict[str, str]) -> None:
    """Every station's credits to the cent, the house's side of every movement, and every
    round's entries adding up to nothing."""
    for name, expected in credits.items():
        assert ledger.balance(table.stations.get(name=name)) == D(expected), name
    stations = LedgerEntry.objects.filter(station__table=table).aggregate(t=Sum("amount"))["t"]
    house = LedgerEntry.objects.filter(station=None).aggregate(t=Sum("amount"))["t"]
    assert house == -stations
    for round in table.rounds.all():
        total = LedgerEntry.objects.filter(round=round).aggregate(t=Sum("amount"))["t"]
        assert total in (None, D(0)), round


# -- the server killed at every phase of a round ----------------------------------------------

TIMERS = {"betting": 5, "insurance": 20, "decision": 10}


@pytest.fixture(params=["embedded", pytest.param("celery", marks=pytest.mark.services)])
def table_servers(request, transactional_db, tmp_path):
    """The server (killed and started again by the test) and, with Celery, a worker and a
    beat process that live through the server's deaths."""
    processes: list[subprocess.Popen] = []
    if request.param == "celery":
        env = server_env(request.getfixturevalue("redis_url"))
        processes += [worker(env), beat(env, tmp_path)]
    else:
        env = server_env()
    server = Server(env)
    try:
        yield request.param, server
    finally:
        server.kill()
        stop_all(processes)


def test_a_round_survives_a_server_kill_at_every_phase(table_servers):
    mode, server = table_servers
    table = make_table(TIMERS)
    server.start()
    s1, s2 = StationClient(server, table, "s1"), StationClient(server, table, "s2")
    shoe = ShoeClient(server, table)

    def restart() -> None:
        """SIGKILL, then the same command on the same port; the clients find it dead."""
        server.kill()
        for client in (s1, s2, shoe):
            client.drop()
        server.start()

    # The server opens the round itself: on the embedded default the first connection
    # resumes the open table (rounds.recovery.resume_tables), with Celery beat's sweep does.
    s1.join()
    s2.join()
    round = wait_for(lambda: current_round(table, "betting"), what="the first round")
    assert s1.ask({"type": "place", "box": 1, "amount": "10"})["ok"]
    assert s2.ask({"type": "place", "box": 2, "amount": "10"})["ok"]

    # 1. Betting: killed with bets down; the betting deadline passes while the server is
    # down (with Celery the worker closes bets meanwhile; embedded, the restart does at once).
    deadline = Round.objects.get(pk=round.pk).deadline
    restart_at = deadline + timedelta(seconds=0.5)
    server.kill()
    for client in (s1, s2, shoe):
        client.drop()
    time.sleep(max((restart_at - timezone.now()).total_seconds(), 0))
    if mode == "celery":  # the timer is in Redis and the worker: it fires without the server
        wait_for(lambda: phase_of(round) == "deal", what="the worker closing bets")
    else:  # it died with the server
        assert phase_of(round) == "betting"
    server.start()
    state = s1.join()
    assert state["round"]["id"] == round.pk
    assert state["bets"] == [{"box": 1, "bet": "main", "stake": "10.00"}]
    s2.join()
    wait_for(lambda: phase_of(round) == "deal", what="bets closed by the overdue timer")
    assert RoundEvent.objects.filter(round=round, kind="bets_closed").count() == 1

    # 2. Mid-deal: three cards out, then killed. The state shows them; the reader's resent
    # card is a duplicate and the deal goes on.
    shoe.hello()
    for seq, card in enumerate(["TS", "9H", "AC"], start=1):
        shoe.card(seq, card)
    restart()
    state = s1.join()
    assert state["round"]["phase"] == "deal"
    assert state["table"]["boxes"] == {"1": ["TS"], "2": ["9H"]}
    assert state["table"]["dealer"]["cards"] == ["AC"]
    assert state["credits"] == "90.00"
    s2.join()
    shoe.hello()
    assert shoe.card(3, "AC")["duplicate"] is True
    for seq, card in enumerate(["6D", "8S", "5C"], start=4):  # 5C: the hole card
        assert shoe.card(seq, card)["duplicate"] is False

    # 3. The insurance step: s1 insures, s2 has not answered when the server dies. Its
    # question and its deadline (the stored one, not a new one) come back with the state.
    wait_for(lambda: phase_of(round) == "insurance", what="the insurance step")
    assert s1.decide("insure")["credits"] == "85.00"
    insurance_deadline = Round.objects.get(pk=round.pk).deadline
    restart()
    state = s2.join()
    assert state["round"]["phase"] == "insurance"
    assert state["round"]["deadline"] == insurance_deadline.isoformat()
    assert state["table"]["station"]["prompt"]["kind"] == "insurance"
    assert "5C" not in json.dumps(state)  # the hole card stays hidden after a restart
    state = s1.join()
    assert state["table"]["station"]["prompt"] is None and state["credits"] == "85.00"
    s2.decide("no_insurance")  # no dealer blackjack: the play step opens

    # 4. The player step: s1 hits, s2 has not answered. After the restart the decision
    # timer, armed again from its stored deadline, stands s2's 17 for it.
    wait_for(lambda: phase_of(round) == "play", what="the play step")
    play_deadline = Round.objects.get(pk=round.pk).deadline
    s1.decide("hit")
    restart()
    state = s2.join()
    assert state["round"]["deadline"] == play_deadline.isoformat()
    assert state["table"]["station"]["prompt"]["kind"] == "decision"
    s1.join()
    wait_for(
        lambda: RoundEvent.objects.filter(round=round, kind="timeout").exists(),
        limit=TIMERS["decision"] + 10,
        what="the decision timer after the restart",
    )
    assert timezone.now() >= play_deadline  # it fired on its deadline, not before
    shoe.hello()
    shoe.card(7, "3D")  # s1's hit: 19
    s1.until(lambda f: f.get("event", {}).get("type") == "prompt")
    s1.decide("stand")

    # 5. The dealer's turn: the hole card is revealed (A 5, soft 16, draws), then killed.
    wait_for(lambda: phase_of(round) == "dealer", what="the dealer's turn")
    restart()
    state = s1.join()
    assert state["round"]["phase"] == "dealer"
    assert state["table"]["dealer"]["cards"] == ["AC", "5C"]
    s2.join()
    shoe.hello()
    shoe.card(8, "2H")  # soft 18: the dealer stands, the round settles

    # 6. Just after the settlement: killed; the results and credits are all there, and the
    # table goes on with a new round.
    wait_for(lambda: phase_of(round) == "settled", what="the settlement")
    entries = LedgerEntry.objects.filter(round=round).count()
    restart()
    state = s1.join()
    assert state["credits"] == "105.00"  # -10 -5 insurance +20 (19 beats 18)
    assert s2.join()["credits"] == "90.00"  # 17 loses to 18
    wait_for(lambda: current_round(table), what="the next round")
    assert LedgerEntry.objects.filter(round=round).count() == entries  # nothing paid twice

    kinds = list(round.events.values_list("kind", flat=True))
    assert kinds == (
        ["bets_closed"] + ["card"] * 6 + ["decision"] * 3 + ["timeout", "card", "decision", "card"]
    )
    assert_the_books_balance(table, {"s1": "105.00", "s2": "90.00"})
    house = LedgerEntry.objects.filter(round=round, station=None).aggregate(t=Sum("amount"))["t"]
    assert house == D("5.00")  # s2's 10 lost to the house, 5 net paid to s1
    hands = {h.station.name: h.result for h in round.hands.select_related("station")}
    assert hands == {"s1": "win", "s2": "lose"}
    for client in (s1, s2, shoe):
        client.drop()


# -- a station whose connection dies mid-round ------------------------------------------------


@pytest.fixture
def embedded_server(transactional_db):
    server = Server(server_env())
    try:
        yield server
    finally:
        server.kill()


def test_a_station_that_loses_its_connection_is_played_by_the_timer(embedded_server):
    server = embedded_server
    table = make_table({"betting": 3, "decision": 4})
    server.start()
    s1, s2, shoe, round = deal_s1_16_s2_17(server, table, "the first round")
    s1.until(lambda f: f.get("event", {}).get("type") == "prompt")
    s1.drop()  # s1's connection dies with its question open
    s2.decide("stand")
    wait_for(
        lambda: RoundEvent.objects.filter(round=round, kind="timeout").exists(),
        limit=10,
        what="the decision timer standing for s1",
    )
    wait_for(lambda: phase_of(round) == "dealer", what="the dealer's turn")
    shoe.card(7, "TC")  # 7 9 T: the dealer busts
    wait_for(lambda: phase_of(round) == "settled", what="the settlement")

    state = s1.join()  # back: its hand was played by the timeout default (stand)
    assert state["credits"] == "110.00"
    assert state["player_history"][0] == {
        "round": round.pk,
        "number": 1,
        "staked": "10.00",
        "returned": "20.00",
        "net": "10.00",
    }
    assert round.hands.get(station__name="s1").cards == ["TS", "6D"]  # stood, never hit
    assert_the_books_balance(table, {"s1": "110.00", "s2": "110.00"})
    for client in (s1, s2, shoe):
        client.drop()


# -- the sweep: deadlines whose timer was lost ------------------------------------------------


@pytest.mark.django_db
def test_the_sweep_expires_a_step_overdue_by_more_than_the_grace():
    table = make_table({"betting": 10, "decision": 10})
    round = writer.open_round(table)  # timers "none": as if the timer had died
    place_bets(table.stations.get(name="s1"), [(1, "main", D("10"))])
    Round.objects.filter(pk=round.pk).update(deadline=timezone.now() - timedelta(seconds=2))
    assert recovery.sweep(grace=5)["expired"] == 0  # late, but within the grace
    assert phase_of(round) == "betting"
    assert recovery.sweep(grace=1) == {"expired": 1, "video_cards": 0, "rounds_opened": 0}
    assert phase_of(round) == "deal"
    assert recovery.sweep(grace=1)["expired"] == 0  # dealing has no deadline


@pytest.mark.django_db
def test_the_sweep_opens_a_round_at_an_open_table_left_without_one():
    table = make_table({"betting": 10, "decision": 10})
    closed = make_table_named("closed", is_open=False)
    round = writer.open_round(table)
    place_bets(table.stations.get(name="s1"), [(1, "main", D("10"))])
    writer.close_bets(round.pk)
    for card in "TS 7C 9D TC".split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    writer.record(round.pk, Decision("s1", "stand"))  # 19 against 17: settled
    assert phase_of(round) == "settled"
    table.rounds.exclude(pk=round.pk).delete()  # the process died before the next round
    assert recovery.sweep(grace=5)["rounds_opened"] == 0  # the settlement is too recent
    RoundEvent.objects.filter(round=round).update(created_at=timezone.now() - timedelta(minutes=1))
    assert recovery.sweep(grace=5)["rounds_opened"] == 1
    assert current_round(table, "betting") is not None
    assert recovery.sweep(grace=5)["rounds_opened"] == 0  # it has one now
    assert not closed.rounds.exists()


@pytest.mark.django_db
def test_the_sweep_deals_the_card_a_video_round_waits_for():
    table = make_table_named("video", mode=Table.Mode.VIDEO)
    round = writer.open_round(table)
    place_bets(table.stations.get(name="v1"), [(1, "main", D("10"))])
    writer.close_bets(round.pk)  # the card job died with the process
    assert recovery.sweep(grace=5)["video_cards"] == 0
    RoundEvent.objects.filter(round=round).update(created_at=timezone.now() - timedelta(minutes=1))
    assert recovery.sweep(grace=5)["video_cards"] == 1
    assert round.events.filter(kind="card").count() == 1


@pytest.mark.django_db
def test_the_sweeps_run_on_the_server_loop_only():
    assert recovery.start_sweeps() is False  # no server loop in a test thread
    assert timers.every(1, recovery.sweep) is False


def make_table_named(name: str, **fields) -> Table:
    jurisdiction, _ = Jurisdiction.objects.get_or_create(code="sweep", defaults={"name": "S"})
    table = Table.objects.create(name=name, jurisdiction=jurisdiction, **fields)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    cash_in(Station.objects.create(table=table, name=name[0] + "1"), "100", key="start")
    return table


# -- Celery: a worker killed while it holds a due timer; Redis restarted ----------------------


@pytest.fixture
def own_redis(redis_url, tmp_path):
    """A Redis of the test's own, where the service tests run (CI; REDIS_URL set)."""
    own = OwnRedis(tmp_path)
    own.start()
    try:
        yield own
    finally:
        own.stop()


@pytest.mark.services
def test_a_timer_held_by_a_killed_worker_still_fires(transactional_db, own_redis, tmp_path):
    env = server_env(own_redis.url)
    table = make_table({"betting": 6, "decision": 10})
    table.is_open = False  # nobody but this test opens a round
    table.save()
    r = own_redis.client()
    processes = [worker(env)]
    try:
        wait_for(lambda: r.exists("_kombu.binding.celery"), what="the first worker")
        # The round opens in a process of its own, as the croupier would: its betting
        # timer is an ETA task, which the only worker takes and holds until it is due.
        django_shell(
            env,
            f"from rounds import writer; from tablehub.models import Table; "
            f"writer.open_round(Table.objects.get(pk={table.pk}))",
        )
        round = table.rounds.get()
        place_bets(table.stations.get(name="s1"), [(1, "main", D("10"))])
        wait_for(
            lambda: r.hlen("unacked") == 1 and r.llen("celery") == 0,
            what="the worker holding the betting timer",
        )
        processes[0].send_signal(signal.SIGKILL)
        processes[0].wait(timeout=10)
        processes.append(worker(env))  # a new worker: the held task does not come back to it
        deadline = Round.objects.get(pk=round.pk).deadline
        time.sleep(max((deadline - timezone.now()).total_seconds(), 0) + 3)
        assert phase_of(round) == "betting"  # not redelivered before the visibility timeout
        assert r.hlen("unacked") == 1
        processes.append(beat(env, tmp_path))  # the sweep acts on the missed deadline
        wait_for(lambda: phase_of(round) == "deal", limit=20, what="the sweep closing bets")
        assert RoundEvent.objects.filter(round=round, kind="bets_closed").count() == 1
        assert ledger.balance(table.stations.get(name="s1")) == D("90.00")
    finally:
        stop_all(processes)


@pytest.mark.services
def test_a_killed_workers_timer_holds_its_step_up_at_most_5_seconds(
    transactional_db, own_redis, tmp_path
):
    """Liveness (issue 17): the worker holding the betting timer is killed and its
    supervisor starts another at once, beat running as in production: bets close no later
    than 5 seconds after their deadline."""
    env = server_env(own_redis.url)
    table = make_table({"betting": 6, "decision": 10})
    table.is_open = False  # nobody but this test opens a round
    table.save()
    r = own_redis.client()
    processes = [worker(env), beat(env, tmp_path)]
    try:
        wait_for(lambda: r.exists("_kombu.binding.celery"), what="the first worker")
        django_shell(
            env,
            f"from rounds import writer; from tablehub.models import Table; "
            f"writer.open_round(Table.objects.get(pk={table.pk}))",
        )
        round = table.rounds.get()
        deadline = round.deadline
        place_bets(table.stations.get(name="s1"), [(1, "main", D("10"))])
        wait_for(lambda: r.hlen("unacked") >= 1, what="the worker holding the betting timer")
        processes[0].send_signal(signal.SIGKILL)
        processes[0].wait(timeout=10)
        processes.append(worker(env))  # the supervisor's restart
        wait_for(lambda: phase_of(round) == "deal", limit=20, what="the sweep closing bets")
        closed = RoundEvent.objects.get(round=round, kind="bets_closed")
        assert closed.created_at - deadline <= timedelta(seconds=5)
    finally:
        stop_all(processes)


@pytest.mark.services
def test_the_table_carries_on_after_redis_restarts_empty(transactional_db, own_redis, tmp_path):
    env = server_env(own_redis.url)
    table = make_table({"betting": 4, "decision": 6})
    server = Server(env)
    the_worker = worker(env)
    processes = [the_worker, beat(env, tmp_path)]
    try:
        server.start()
        s1, s2, shoe, round = deal_s1_16_s2_17(server, table, "the sweep opening a round")
        wait_for(lambda: phase_of(round) == "play", what="the play step")
        s1.decide("hit")

        # Redis goes down with the decision timer and the channel layer's groups in it, and
        # comes back empty.
        deadline = Round.objects.get(pk=round.pk).deadline
        own_redis.shutdown()
        own_redis.start()
        wait_for(
            lambda: RoundEvent.objects.filter(round=round, kind="timeout").exists(),
            limit=25,
            what="the lost decision timer, fired by the sweep",
        )
        # Liveness (issue 17): the worker rode out the restart, and the step was held up no
        # longer than its timer plus 5 seconds.
        assert the_worker.poll() is None, "the worker exited when Redis restarted"
        timeout = RoundEvent.objects.get(round=round, kind="timeout")
        assert timeout.created_at - deadline <= timedelta(seconds=5)
        # The stations and the reader connect again and join: the whole state is there.
        state = s2.join()
        assert state["credits"] == "90.00"
        assert state["table"]["station"]["hands"][0]["finished"] is True  # stood by the timer
        state = s1.join()
        assert state["table"]["station"]["hands"][0]["cards"] == ["TS", "6D"]
        shoe.hello()
        shoe.card(7, "4D")  # s1's hit: 20
        s1.until(lambda f: f.get("event", {}).get("type") == "prompt")
        s1.decide("stand")
        wait_for(lambda: phase_of(round) == "dealer", what="the dealer's turn")
        shoe.card(8, "TC")  # 7 9 T: the dealer busts
        wait_for(lambda: phase_of(round) == "settled", what="the settlement")
        s1.until(lambda f: f.get("event", {}).get("type") == "round_over")
        assert_the_books_balance(table, {"s1": "110.00", "s2": "110.00"})
        for client in (s1, s2, shoe):
            client.drop()
    finally:
        server.kill()
        stop_all(processes)
