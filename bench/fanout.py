"""Fan-out: how fast a scanned card reaches every station; bets and decisions under load.

    .venv/bin/python bench/fanout.py [--stations 50 200 500] [--scans 50]
        [--modes fanout decisions bets deadline] [--window-ms 500] [--decision-timer 5]
        [--clock prompt|ping] [--seed 1] [--gc-log] [--processes 1] [--history 0]
        [--protection] [--tablet] [--py-spy DIR]

For each N: starts daphne on 127.0.0.1 (embedded default: SQLite, in-memory channel layer;
with REDIS_URL set, the Redis layer), connects N stations over real websockets (the
server's resident memory is read before and after: per station), and opens a round.

* ``bets``, the bet burst: all N stations place a bet at once; the time from each bet sent
  to its reply. Then the same burst against the reference (below), whose server answers
  each message at once and writes nothing: what this machine's sockets alone cost.
* ``fanout``: the card reader sends ``--scans`` burn cards one by one: the fan-out time of
  a scan is from sending it to the moment the last station has the event. The reference
  for what this machine can do, a minimal broadcast server written with the ``websockets``
  library alone, runs beside it with N stations of its own on the same client, and the two
  take turns scan by scan, so that the rest of the machine's load falls on both alike and
  their ratio means something on a noisy machine.
* ``decisions``, the decision burst: the deal, and all N stations decide at once: the time
  from each decision sent to its reply; then the same burst against the reference.
* ``deadline``: a second round with a decision timer of ``--decision-timer`` seconds, every
  station on the same box (common draw). Each station answers at a uniformly random moment
  in the last ``--window-ms`` before its prompt's ``deadline``, counting down from the
  prompt's ``server_time`` as a station does (``--clock prompt``; a prompt that arrives late
  makes the countdown late by as much), or by the server's clock as ``ping`` measured it
  (``--clock ping``). Whether an answer left on time is judged by the server's clock (from
  ``ping``; on 127.0.0.1 the two processes read the same clock). The server's own timer
  expires the step
  (TABLEHUB_TIMERS=inprocess, or with REDIS_URL a Celery worker the bench starts), as in
  production. Reported: the time from each answer sent to its reply, and the on-time
  decisions lost: answers sent at or before the deadline (server's clock) that were refused,
  or that the round's event log shows answered by the step's timeout instead.

With ``--processes P`` (the production stack: DATABASE_URL and REDIS_URL) P daphne processes
serve the table and station k joins process k mod P, as a load balancer spreads them; the
reader and the deadline's probe use the first. The memory is the sum over the P processes.

With ``--history H`` every station's ledger holds H entries of earlier players' sessions
before the bursts (a busy station writes about 1500 a day): what a burst reads must not grow
with them. With ``--protection`` the table's jurisdiction has every player protection on
(``PROTECTION``: an idle time, reality checks, a longest session, disputes with a window), as
a regulated casino's would; without it, none. With ``--tablet`` the dealer's tablet is open
at the table through the bursts, asking for its state as the reference tablet page does
(``Tablet``): what that costs the server is in the bursts' figures. With ``--py-spy DIR``
each burst's server processes are sampled by py-spy, the collapsed stacks written to DIR
(``spied``).

With ``--gc-log`` the server runs with its garbage collections logged, and the report lists
those around the deadline (a collection stops the server's event loop: frames wait unstamped).

The bets and the decision burst happen whatever ``--modes`` says (the round needs them);
``--modes`` chooses what is reported and whether the scans and the deadline round run. Once
every bet is answered a dealer's tablet closes the bets (``close_bets``), so the server
that holds the tablet's socket closes them, as at a real table.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.loopback import exited, start_daphne, start_worker  # noqa: E402
from tablehub.loopback import free_port, wait_for_port  # noqa: E402

MODES = ("fanout", "decisions", "bets", "deadline")
# The 8-deck shoe in order; the burns of the fan-out come from it.
BURN_CARDS = [rank + suit for suit in "SHDC" for rank in "23456789TJQKA"] * 8
DEAL = ("TH", "9C", "7D", "KD")  # box 1: T 7 (17, asked); dealer 9, K in the hole (19)
TIMERS = {"betting": 60, "decision": 60}  # the first round's: no timer fires in it


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def summary(label: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return (
        f"{label}: p50 {statistics.median(ms):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
        f"max {max(ms):.1f} ms ({len(ms)} samples)"
    )


def rss_kib(pid: int) -> int:
    """The resident memory of process ``pid``, KiB (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"process {pid} has no VmRSS")


def cpu_seconds(pids: list[int]) -> tuple[float, float]:
    """The CPU time the processes ``pids`` have used so far (Linux): their main threads (the
    event loops) and their other threads (the database threads, the register's publisher)."""
    tick = os.sysconf("SC_CLK_TCK")
    main = other = 0.0
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                    fields = stat.read().rpartition(")")[2].split()
            except FileNotFoundError:  # the thread ended meanwhile
                continue
            used = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
            if int(tid) == pid:
                main += used
            else:
                other += used
    return main, other


def cpu_line(before: tuple[float, float], after: tuple[float, float], messages: int) -> str:
    loop, other = ((b - a) * 1000 / messages for a, b in zip(before, after, strict=True))
    return (
        f"server CPU per message: {loop + other:.2f} ms ({loop:.2f} ms event loop,"
        f" {other:.2f} ms other threads: the database's)"
    )


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def wall(stamp: float) -> float:
    """The client's wall clock (the server's clock is read against it) at the recent
    perf_counter moment ``stamp``."""
    return stamp + time.time() - time.perf_counter()


# --- the client, the same for both servers ---------------------------------------------------


class Station:
    def __init__(self, ws, name: str = "") -> None:
        self.ws = ws
        self.name = name
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for text in self.ws:
            self.inbox.put_nowait((time.perf_counter(), json.loads(text)))

    async def next(self, test, limit: float = 30.0) -> tuple[float, dict]:
        """The first frame that passes ``test`` (frames before it are dropped), and the
        perf_counter moment it arrived."""
        deadline = time.perf_counter() + limit
        while True:
            stamp, frame = await asyncio.wait_for(self.inbox.get(), deadline - time.perf_counter())
            if test(frame):
                return stamp, frame

    async def reply(self, client_id: str, limit: float = 30.0) -> tuple[float, dict]:
        return await self.next(lambda f: f.get("client_id") == client_id, limit)


class Tablet:
    """The dealer's tablet at the table (``--tablet``), asking for its state as
    croupier/static/croupier/tablet.js does: a change or an event frame asks for it
    ``REFRESH`` seconds later, unless an ask is already waiting (``refreshSoon``)."""

    REFRESH = 0.12

    def __init__(self, ws) -> None:
        self.ws = ws
        self.asked = 0  # the states asked for so far
        self.waiting: asyncio.TimerHandle | None = None
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for text in self.ws:
            if json.loads(text).get("type") in ("event", "changed") and self.waiting is None:
                self.waiting = asyncio.get_running_loop().call_later(self.REFRESH, self._ask)

    def _ask(self) -> None:
        self.waiting = None
        self.asked += 1
        message = {"type": "state", "client_id": f"state{self.asked}"}
        asyncio.ensure_future(self.ws.send(json.dumps(message)))


def tablet_cookie(table_id: int) -> str:
    """A dealer of the table, logged in: the session cookie of the tablet's socket."""
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from tablehub import roles
    from tablehub.models import Table

    dealer = User.objects.create_user(f"bench-dealer-{table_id}-{time.time_ns()}")
    dealer.groups.add(Group.objects.get_or_create(name=roles.DEALER)[0])
    Table.objects.get(pk=table_id).staff.add(dealer)
    client = Client()
    client.force_login(dealer)
    return f"sessionid={client.cookies['sessionid'].value}"


class Target(NamedTuple):
    """A server under measurement: its stations, how to make it send one event, and how
    to know that event when a station gets it."""

    stations: list[Station]
    send: Callable[[int], Awaitable[None]]
    is_event: Callable[[dict], bool]


async def fan_out(targets: list[Target], scans: int) -> list[list[float]]:
    """The fan-out times of each target, the targets taking turns scan by scan, so that
    whatever else the machine does at a moment falls on both alike."""
    # The client is not what is measured: its garbage collector's pauses would show up as
    # slow fan-outs of whichever server it measures, so it collects between scans only.
    times: list[list[float]] = [[] for _ in targets]
    gc.collect()
    gc.disable()
    try:
        for k in range(scans):
            for target, samples in zip(targets, times, strict=True):
                start = time.perf_counter()
                await target.send(k)
                arrivals = await asyncio.gather(*(s.next(target.is_event) for s in target.stations))
                samples.append(max(stamp for stamp, _ in arrivals) - start)
                gc.collect(0)
    finally:
        gc.enable()
    return times


async def burst(
    stations: list[Station], message: dict[str, Any], limit: float
) -> tuple[list[float], Counter[str]]:
    """Every station sends ``message`` at once (one send after the other, no waiting for a
    reply): the time from each send to its reply, and the refusals by error code."""
    text, client_id = json.dumps(message), message["client_id"]
    sent = []
    gc.collect()
    gc.disable()  # as in the fan-out: the client's pauses are not the server's
    try:
        for station in stations:
            sent.append(time.perf_counter())
            await station.ws.send(text)
        replies = await asyncio.gather(*(s.reply(client_id, limit) for s in stations))
    finally:
        gc.enable()
    refused = Counter(frame["error"]["code"] for _, frame in replies if not frame.get("ok"))
    return [stamp - t for (stamp, _), t in zip(replies, sent, strict=True)], refused


def ratios(ours: list[float], reference: list[float]) -> str:
    """Our p50 and p99 over the reference's."""
    return ", ".join(
        f"{label} {percentile(ours, p) / percentile(reference, p):.1f}x"
        for label, p in (("p50", 0.5), ("p99", 0.99))
    )


def burst_reference(ours: list[float], reference: list[float]) -> str:
    """The same burst against the reference, and our p50 and p99 over its."""
    reference_line = summary("the same burst, websockets-only reference", reference)
    return f"{reference_line}; ours / it: {ratios(ours, reference)}"


def refusals(refused: Counter[str]) -> str:
    if not refused:
        return "none refused"
    return "refused: " + ", ".join(f"{code} {n}" for code, n in refused.most_common())


# --- the deadline mode -----------------------------------------------------------------------


async def server_clock_offset(station: Station, pings: int = 5) -> tuple[float, float]:
    """The server's clock minus the client's (seconds), from the ``ping`` with the shortest
    round trip, and that round trip."""
    best: tuple[float, float] | None = None
    for k in range(pings):
        before = time.time()
        await station.ws.send(json.dumps({"type": "ping", "client_id": f"ping{k}"}))
        _, frame = await station.reply(f"ping{k}", 10.0)
        after = time.time()
        offset = epoch(frame["server_time"]) - (before + after) / 2
        if best is None or after - before < best[1]:
            best = (offset, after - before)
        await asyncio.sleep(0.05)
    assert best is not None
    return best


async def probe_receipt_lag(
    probe: Station, deadline: float, offset: float, span: tuple[float, float], every: float
) -> list[tuple[float, float]]:
    """Ping the server from ``span[0]`` before ``deadline`` to ``span[1]`` after it (server
    clock), one ping at a time, one every ``every`` seconds at most: for each ping, when it
    was sent relative to the deadline and how much later the server read its clock for the
    reply (the ping's ``server_time``; the server stamps a frame's receipt the same way, just
    before). Bounded by the span's length over ``every`` pings."""
    lags: list[tuple[float, float]] = []
    await asyncio.sleep(max(0.0, deadline - span[0] - offset - time.time()))
    for k in range(int((span[0] + span[1]) / every) + 1):
        sent, sent_server = time.perf_counter(), time.time() + offset
        if sent_server > deadline + span[1]:
            break
        await probe.ws.send(json.dumps({"type": "ping", "client_id": f"lag{k}"}))
        _, frame = await probe.reply(f"lag{k}", 30.0)
        lags.append((sent_server - deadline, epoch(frame["server_time"]) - sent_server))
        await asyncio.sleep(max(0.0, sent + every - time.perf_counter()))
    return lags


def lag_report(lags: list[tuple[float, float]]) -> list[str]:
    before = [lag for at, lag in lags if at <= 0]
    lines = []
    if before:
        lines.append(summary("receipt lag of pings sent in the last second", before))
    series = " ".join(f"{lag * 1000:.0f}" for at, lag in lags if -0.5 <= at <= 0.3)
    lines.append(f"  ping by ping, from 500 ms before to 300 ms after the deadline: {series} ms")
    return lines


@dataclass
class Answer:
    station: str
    deadline: float  # the prompt's, server clock (epoch seconds)
    prompt_late: float  # the prompt's arrival after its server_time, by the server's clock
    sent: float  # when the answer left, server clock
    latency: float  # from sent to its reply
    ok: bool
    code: str  # the error code of a refusal, "" when ok


async def answer_in_window(
    station: Station,
    round_id: int,
    clock: str,
    offset: float,
    before_deadline: float,
    limit: float,
) -> Answer:
    """Wait for this round's prompt, then answer ``stand`` ``before_deadline`` seconds
    before its deadline by the station's idea of the server's clock: with ``clock``
    "prompt", the server's clock was the prompt's ``server_time`` when the prompt arrived
    (a station's countdown, docs/protocol.md); with "ping", the client's clock plus
    ``offset``, the server's clock minus the client's from ``ping``. Whether the answer left
    on time is judged with ``offset``."""
    stamp, frame = await station.next(
        lambda f: f.get("round") == round_id and f.get("event", {}).get("type") == "prompt", limit
    )
    event = frame["event"]
    deadline, server_time = epoch(event["deadline"]), epoch(event["server_time"])
    arrived = wall(stamp)
    prompt_late = arrived + offset - server_time
    believed = server_time - arrived if clock == "prompt" else offset
    await asyncio.sleep(max(0.0, deadline - before_deadline - believed - time.time()))
    sent, sent_wall = time.perf_counter(), time.time()
    await station.ws.send(json.dumps({"type": "decide", "client_id": "d2", "action": "stand"}))
    replied, reply = await station.reply("d2", limit)
    code = "" if reply.get("ok") else reply["error"]["code"]
    return Answer(
        station.name,
        deadline,
        prompt_late,
        sent_wall + offset,
        replied - sent,
        bool(reply.get("ok")),
        code,
    )


def answered_by_timeout(
    round_id: int, prompted: set[str]
) -> tuple[set[str], set[str], float | None]:
    """From the round's event log: the prompted stations a timeout answered for (those still
    asked when a ``timeout`` event was applied), the stations whose decision was applied,
    and when the round was settled (epoch seconds; here the step's last answer or its
    timeout settles it)."""
    from rounds.models import Round, RoundEvent

    decided: set[str] = set()
    timed_out: set[str] = set()
    rows = RoundEvent.objects.filter(
        round_id=round_id, kind__in=[RoundEvent.Kind.DECISION, RoundEvent.Kind.TIMEOUT]
    ).order_by("seq")
    for kind, payload in rows.values_list("kind", "payload"):
        if kind == RoundEvent.Kind.DECISION:
            decided.add(payload["station"])
        elif payload.get("station") is None:  # every station still asked
            timed_out |= prompted - decided
        elif payload["station"] not in decided:
            timed_out.add(payload["station"])
    settled = Round.objects.values_list("settled_at", flat=True).get(pk=round_id)
    return timed_out, decided, settled.timestamp() if settled is not None else None


def round_deadline(round_id: int) -> float:
    """The round's current step deadline (epoch seconds)."""
    from rounds.models import Round

    deadline = Round.objects.values_list("deadline", flat=True).get(pk=round_id)
    if deadline is None:
        raise RuntimeError(f"round {round_id} has no deadline")
    return deadline.timestamp()


def wait_until_ended(round_id: int, limit: float) -> str:
    """Poll the round's phase until it is settled or void (bounded); the last phase seen."""
    from rounds.models import ENDED, Round

    phase = ""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        phase = Round.objects.values_list("phase", flat=True).get(pk=round_id)
        if phase in ENDED:
            break
        time.sleep(0.1)
    return phase


def deadline_report(
    answers: list[Answer], timed_out: set[str], decided: set[str], settled: float | None
) -> list[str]:
    on_time = [a for a in answers if a.sent <= a.deadline]
    late = [a for a in answers if a.sent > a.deadline]
    refused_on_time = [a for a in on_time if not a.ok]
    timeout_on_time = [a for a in on_time if a.station in timed_out]
    lost = {a.station for a in refused_on_time} | {a.station for a in timeout_on_time}
    lines = [
        summary("answer sent -> reply (refused ones too)", [a.latency for a in answers]),
        f"on-time decisions lost: {len(lost)} of {len(on_time)}"
        f" ({refusals(Counter(a.code for a in refused_on_time))};"
        f" a timeout applied to {len(timeout_on_time)} of them)",
    ]
    if lost:
        margins = sorted((a.deadline - a.sent) * 1000 for a in on_time if a.station in lost)
        lines.append(
            f"  lost answers were sent {margins[0]:.1f} to {margins[-1]:.1f} ms before the deadline"
        )
    kept = [(a.deadline - a.sent) * 1000 for a in on_time if a.station not in lost]
    if kept:
        lines.append(f"  the latest answer kept was sent {min(kept):.1f} ms before the deadline")
    if late:
        lines.append(
            f"sent after the deadline by the server's clock: {len(late)}"
            f" ({refusals(Counter(a.code for a in late if not a.ok))},"
            f" {sum(a.ok for a in late)} accepted)"
        )
    if settled is not None and answers:
        how = "by the timeout" if timed_out else "by the last answer"
        after = (settled - answers[0].deadline) * 1000
        lines.append(f"the round was settled ({how}) {after:.0f} ms after the deadline")
    odd = [a.station for a in answers if a.ok and a.station not in decided]
    if odd:
        lines.append(f"accepted but not in the event log: {len(odd)}")
    lines.append(
        summary("prompt's arrival after its server_time", [a.prompt_late for a in answers])
    )
    return lines


# --- our server ------------------------------------------------------------------------------


# Every player protection a jurisdiction may set, on (``--protection``): what each reply's
# session and Dispute button are made of.
PROTECTION = {
    "idle_minutes": 10,
    "reality_check_minutes": 60,
    "max_session_minutes": 240,
    "disputes_allowed": True,
    "dispute_window_seconds": 300,
}


def set_up_table(
    stations: int, history: int = 0, protection: bool = False
) -> tuple[int, list[str]]:
    """A table with ``stations`` stations of 1000.00 credits each, a player session each;
    with ``history``, each station's ledger holds that many entries of earlier players'
    sessions before it (``add_history``); with ``protection``, its jurisdiction has every
    player protection on (``PROTECTION``)."""
    import django

    django.setup()
    from django.core.management import call_command

    from rounds.engine import RuleSet
    from stations.models import Station as StationRow
    from stations.services import cash_in
    from tablehub.models import Jurisdiction, Table, TableConfig

    call_command("migrate", verbosity=0)  # the same database for every N of one run
    tag = f"{stations}-{time.time_ns()}"  # a DATABASE_URL database keeps earlier runs' tables
    jurisdiction = Jurisdiction.objects.create(
        code=f"bench{tag}",
        name="Bench",
        max_decision_seconds=120,
        **(PROTECTION if protection else {}),
    )
    table = Table.objects.create(name=f"bench-{tag}", jurisdiction=jurisdiction)
    table.set_reader_key("reader")
    table.save()
    TableConfig.objects.create(
        table=table, version=1, rules=RuleSet(decks=8).to_dict(), timers=TIMERS
    )
    names = [f"st{n:04d}" for n in range(stations)]
    rows = []
    for name in names:
        row = StationRow(table=table, name=name)
        row.set_credential(name)
        row.save()
        rows.append(row)
    if history:  # earlier players' sessions, before this one's cash-in
        add_history(table.pk, history)
    for row in rows:
        cash_in(row, "1000", key="start")
    analyze()
    return table.pk, names


def add_history(table_id: int, entries: int) -> None:
    """Give each station of the table ``entries`` ledger entries of earlier play: a stake of
    10.00 and its return of 10.00 in turn, so that its credits stay what they were. A
    station of a busy stadium writes about 1500 a day (two a round, 60 rounds an hour, 12
    hours): what a burst reads must not grow with them. One INSERT ... SELECT (PostgreSQL
    and SQLite both), written straight to the table: these entries have no house side and
    no link in the table's chain, so ``manage.py check_ledger`` would report them."""
    from django.db import connection
    from django.utils import timezone

    from payouts.models import LedgerEntry
    from stations.models import Station as StationRow

    quote = connection.ops.quote_name
    sql = (
        "WITH RECURSIVE played(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM played"
        " WHERE n + 1 < %s)"
        f" INSERT INTO {quote(LedgerEntry._meta.db_table)}"
        " (station_id, table_id, kind, amount, {key}, created_at, chain_link)"
        " SELECT station.id, station.table_id,"
        " CASE WHEN played.n %% 2 = 0 THEN 'stake' ELSE 'return' END,"
        " CASE WHEN played.n %% 2 = 0 THEN -10 ELSE 10 END,"
        " 'history:' || station.id || ':' || played.n, %s, ''"
        f" FROM {quote(StationRow._meta.db_table)} station, played"
        " WHERE station.table_id = %s"
    ).format(key=quote("key"))
    with connection.cursor() as cursor:
        cursor.execute(sql, [entries, timezone.now(), table_id])


def analyze() -> None:
    """PostgreSQL: the planner's statistics brought up to date, as autovacuum keeps them on a
    casino's server. Without them (autovacuum off, as on our test machine, and a bench
    database that keeps every earlier run's rows) the planner scanned the whole ledger for a
    batch's balances: 55 ms a read at 162 000 entries, against about 1 ms by the index."""
    from django.db import connection  # here, as this file's other Django imports: after setup

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def new_round(table_id: int, decision_timer: float | None = None) -> int:
    """Open a round at the table; with ``decision_timer``, under a new configuration
    version with that decision timer."""
    from rounds import writer
    from tablehub.models import Table, TableConfig

    table = Table.objects.get(pk=table_id)
    if decision_timer is not None:
        current = table.current_config()
        assert current is not None
        TableConfig.objects.create(
            table=table,
            version=current.version + 1,
            rules=current.rules,
            timers=TIMERS | {"decision": decision_timer},
        )
    return writer.open_round(table).pk


@dataclass
class Options:
    scans: int
    modes: set[str]
    window: float  # seconds
    decision_timer: float  # seconds
    clock: str  # how a station knows the server's clock: "prompt" or "ping"
    seed: int
    gc_log: bool  # the server logs its garbage collections (``logged_server``)
    processes: int = 1  # daphne processes sharing the stations (needs REDIS_URL when > 1)
    py_spy: Path | None = None  # where each burst's samples of the server go (``spied``)
    history: int = 0  # ledger entries of earlier sessions each station has (``add_history``)
    protection: bool = False  # the jurisdiction's player protection on (``PROTECTION``)
    tablet: bool = False  # the dealer's tablet open through the bursts (``Tablet``)


class spied:
    """py-spy samples every server process while a burst or the fan-out's scans run
    (``--py-spy DIR``): one file of collapsed stacks per burst and process,
    ``DIR/<burst>-<n>-<pid>.txt``, for flame graphs or a count of the functions a burst spends
    its time in. Nothing when no DIR was given."""

    def __init__(self, options: Options, label: str, pids: list[int]) -> None:
        self.directory, self.label, self.pids = options.py_spy, label, pids
        self.samplers: list[subprocess.Popen] = []

    async def __aenter__(self) -> None:
        if self.directory is None:
            return
        py_spy = str(Path(sys.executable).with_name("py-spy"))
        for pid in self.pids:
            out = self.directory / f"{self.label}-{pid}.txt"
            command = [py_spy, "record", "--pid", str(pid), "--rate", "500", "--threads"]
            command += ["--nonblocking", "--format", "raw", "--output", str(out)]
            self.samplers.append(
                subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        await asyncio.sleep(0.5)  # py-spy has attached

    async def __aexit__(self, *_exc: object) -> None:
        for sampler in self.samplers:
            sampler.send_signal(signal.SIGINT)  # py-spy writes its file on an interrupt
        for sampler in self.samplers:
            await asyncio.to_thread(sampler.wait, 30)


async def measure(
    ports: list[int],
    server_pids: list[int],
    table_id: int,
    names: list[str],
    options: Options,
    reference_port: int,
    reference_pid: int,
) -> dict[str, Any]:
    import websockets
    from asgiref.sync import sync_to_async
    from websockets.typing import Origin

    n = len(names)
    slow = 60.0 + 0.1 * n  # the longest wait for one reply or event in a burst
    result: dict[str, Any] = {}
    # Station k joins server process k mod P (as a load balancer spreads them); the reader,
    # the probe and the timers use the first.
    urls = [f"ws://127.0.0.1:{port}/ws/tables/{table_id}" for port in ports]
    url = urls[0]
    origin = Origin("http://127.0.0.1")
    spread = iter(range(len(names)))

    def server_rss() -> int:
        return sum(rss_kib(pid) for pid in server_pids)

    async def join(name: str) -> Station:
        server_url = urls[next(spread) % len(urls)]
        ws = await websockets.connect(f"{server_url}/station/", origin=origin, max_queue=None)
        station = Station(ws, name)
        message = {"type": "join", "client_id": "j", "station": name, "credential": name}
        await ws.send(json.dumps(message))
        _, reply = await station.reply("j")
        if not reply.get("ok"):
            raise RuntimeError(f"{name} could not join: {reply}")
        return station

    await asyncio.sleep(1.0)  # the server's start-up is over
    rss = [server_rss()]
    stations = [await join(names[0])]  # the first join also loads the consumer's code
    rss.append(server_rss())
    for name in names[1:]:
        stations.append(await join(name))
    await asyncio.sleep(1.0)
    rss.append(server_rss())
    result["rss"] = rss

    # One dealer of the table, logged in once: the tablet's socket (``--tablet``) and the
    # one that closes the bets (``close_bets``).
    cookie = await sync_to_async(tablet_cookie)(table_id)

    def tablet_socket() -> Any:
        return websockets.connect(
            f"{url}/croupier/", origin=origin, additional_headers={"Cookie": cookie}
        )

    tablet: Tablet | None = None
    if options.tablet:
        tablet = Tablet(await tablet_socket())
    asked = 0

    def tablet_asked() -> str:
        """How many states the tablet asked for since the last call."""
        nonlocal asked
        if tablet is None:
            return ""
        since, asked = tablet.asked - asked, tablet.asked
        return f"; the tablet asked for its state {since} times"

    async def close_bets(label: str) -> None:
        """The dealer closes the bets at the tablet, as at a real table: the server closes
        them (and builds the round's engine) in the process of the tablet's socket, the
        first, not in the bench's (where only a Celery worker's timer would)."""
        async with tablet_socket() as croupier:
            await croupier.send(json.dumps({"type": "close_bets", "client_id": label}))
            while True:  # the tablet's state and the table's events come too
                frame = json.loads(await asyncio.wait_for(croupier.recv(), slow))
                if frame.get("client_id") == label:
                    if not frame.get("ok"):
                        raise RuntimeError(f"the tablet could not close the bets: {frame}")
                    return

    # The reference's N stations, for the bursts' and the fan-out's ratios.
    reference = await connect_reference(reference_port, n, reference_pid)
    result["reference_rss"] = reference.rss

    # Round 1: the bet burst, the scans, the deal and the decision burst; each burst is
    # followed by the same burst against the reference.
    round_id = await sync_to_async(new_round)(table_id)
    bet = {"type": "place", "client_id": "b", "box": 1, "amount": "10"}
    cpu = cpu_seconds(server_pids)
    tablet_asked()
    async with spied(options, f"bets-{n}", server_pids), timed_window(result, "bet burst"):
        result["bets"] = await burst(stations, bet, slow)
    result["bets_cpu"] = cpu_line(cpu, cpu_seconds(server_pids), n) + tablet_asked()
    await asyncio.sleep(1.0)  # the bets' events have reached every station: a quiet client
    result["bets_reference"] = (await burst(reference.target.stations, bet, slow))[0]
    await close_bets("close1")

    shoe = await websockets.connect(f"{url}/shoe/", origin=origin, max_queue=None)
    await shoe.send(json.dumps({"type": "hello", "key": "reader"}))
    await shoe.recv()
    cards = iter(BURN_CARDS)
    seq = 0

    async def scan(card: str, burn: bool) -> None:
        nonlocal seq
        seq += 1
        await shoe.send(json.dumps({"type": "card", "seq": seq, "card": card, "burn": burn}))

    async def deal(round_id: int) -> None:
        for card in DEAL:
            await scan(card, False)
            reply = json.loads(await asyncio.wait_for(shoe.recv(), slow))
            if not reply.get("ok"):
                raise RuntimeError(f"the scan of {card} was refused: {reply}")

    if "fanout" in options.modes:

        async def burn(_k: int) -> None:
            await scan(next(cards), True)

        def is_burn(frame: dict) -> bool:
            return frame.get("event", {}).get("type") == "burn"

        async with spied(options, f"fanout-{n}", server_pids), timed_window(result, "fan-out"):
            fanout, reference_fanout = await fan_out(
                [Target(stations, burn, is_burn), reference.target], options.scans
            )
        result["fanout"], result["reference"] = fanout, reference_fanout
        for _ in range(options.scans):  # the reader's answers to the burns
            await asyncio.wait_for(shoe.recv(), slow)

    await deal(round_id)
    for station in stations:
        await station.next(lambda f: f.get("event", {}).get("type") == "prompt", slow)
    decide = {"type": "decide", "client_id": "d", "action": "stand"}
    cpu = cpu_seconds(server_pids)
    tablet_asked()
    async with (
        spied(options, f"decisions-{n}", server_pids),
        timed_window(result, "decision burst"),
    ):
        result["decisions"] = await burst(stations, decide, slow)
    result["decisions_cpu"] = cpu_line(cpu, cpu_seconds(server_pids), n) + tablet_asked()
    phase = await sync_to_async(wait_until_ended)(round_id, slow)
    if phase != "settled":
        raise RuntimeError(f"round {round_id} is {phase} after every station stood")
    await asyncio.sleep(1.0)  # the settlement has reached every station: a quiet client
    result["decisions_reference"] = (await burst(reference.target.stations, decide, slow))[0]
    await reference.close()

    if "deadline" in options.modes:
        # Round 2: common draw, a short decision timer, answers in the last moments of it.
        round_id = await sync_to_async(new_round)(table_id, options.decision_timer)
        bet = {"type": "place", "client_id": "b2", "box": 1, "amount": "10"}
        _, refused = await burst(stations, bet, slow)
        if refused:
            raise RuntimeError(f"bets of the deadline round {refusals(refused)}")
        await close_bets("close2")
        # The probe: a socket that only pings (no join), for the server's receipt lag.
        probe = Station(await websockets.connect(f"{url}/station/", origin=origin), "probe")
        offset, rtt = await server_clock_offset(probe)
        result["clock"] = (offset, rtt)
        rng = random.Random(options.seed)
        gc.collect()
        gc.disable()  # as in the fan-out: the client's pauses are not the server's
        try:
            answering = [
                asyncio.create_task(
                    answer_in_window(
                        station,
                        round_id,
                        options.clock,
                        offset,
                        rng.uniform(0.0, options.window),
                        options.decision_timer + slow,
                    )
                )
                for station in stations
            ]
            await deal(round_id)
            deadline = await sync_to_async(round_deadline)(round_id)
            result["deadline_at"] = deadline
            lags = await probe_receipt_lag(probe, deadline, offset, (1.0, 0.3), 0.05)
            answers = await asyncio.gather(*answering)
        finally:
            gc.enable()
        result["lags"] = lag_report(lags)
        await probe.ws.close()
        phase = await sync_to_async(wait_until_ended)(round_id, slow)
        if phase != "settled":
            raise RuntimeError(f"the deadline round {round_id} is {phase}")
        log = await sync_to_async(answered_by_timeout)(round_id, set(names))
        result["deadline"] = deadline_report(answers, *log)

    for station in stations:
        await station.ws.close()
    await shoe.close()
    if tablet is not None:
        await tablet.ws.close()
    return result


# --- the reference: a broadcast server with the websockets library alone -------------------


class Reference(NamedTuple):
    target: Target
    close: Callable[[], Awaitable[None]]
    rss: tuple[int, int]  # the reference server's resident memory (KiB) before, after


async def connect_reference(port: int, stations_count: int, pid: int) -> Reference:
    """N stations and a sender connected to the reference server on ``port``."""
    import websockets

    url = f"ws://127.0.0.1:{port}/"
    before = rss_kib(pid)
    stations = [
        Station(await websockets.connect(url, max_queue=None)) for _ in range(stations_count)
    ]
    sender = await websockets.connect(url)
    await asyncio.sleep(0.5)
    after = rss_kib(pid)

    async def send(k: int) -> None:
        await sender.send(json.dumps({"type": "event", "event": {"type": "burn", "k": k}}))

    def is_event(frame: dict) -> bool:
        return frame.get("type") == "event"

    async def close() -> None:
        for station in stations:
            await station.ws.close()
        await sender.close()

    return Reference(Target(stations, send, is_event), close, (before, after))


def reference_server(port: int) -> None:
    """The reference: a broadcast server with the websockets library alone. A message with a
    ``client_id`` gets a reply to its sender only (the bursts' reference: a server that
    reads, parses and answers, and writes nothing down); any other is sent to every other
    client (the fan-out's)."""
    from websockets.asyncio.server import broadcast, serve

    clients = set()

    async def handler(ws) -> None:
        clients.add(ws)
        try:
            async for message in ws:
                client_id = json.loads(message).get("client_id")
                if client_id is None:
                    broadcast(clients - {ws}, message)
                else:
                    await ws.send(json.dumps({"type": "reply", "client_id": client_id, "ok": True}))
        finally:
            clients.discard(ws)

    async def main() -> None:
        async with serve(handler, "127.0.0.1", port, max_queue=None):
            await asyncio.Future()

    asyncio.run(main())


def bench_environment() -> tuple[dict[str, str], str]:
    """The server's environment, set once for the whole run (Django is set up once), and
    its timers backend. This process fires no timer (it closes bets itself); the server
    expires the deadline round's step itself, as in production: on its own event loop on
    the embedded default, with Celery (a worker started by ``run``) with REDIS_URL."""
    workdir = Path(tempfile.mkdtemp(prefix="tablehub-fanout-"))
    env = {
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
        "TABLEHUB_TIMERS": "none",
        "DEBUG": "false",
        "SECRET_KEY": "bench-only",
        "ALLOWED_ORIGINS": "http://127.0.0.1",  # the loopback clients' origin (no TLS)
    }
    if "DATABASE_URL" not in os.environ:
        env["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ.update(env)
    timers = "celery" if os.environ.get("REDIS_URL") else "inprocess"
    return dict(os.environ) | {"TABLEHUB_TIMERS": timers}, timers


def logged_server(log_path: str, daphne_args: list[str]) -> None:
    """Daphne with arguments ``daphne_args``, its garbage collections logged to ``log_path``
    (every generation-2 collection, and any other over 10 ms): one line each, the wall-clock
    time it ended, the generation, the seconds it took."""
    import gc

    from daphne.cli import CommandLineInterface

    log = open(log_path, "w", buffering=1)  # open for as long as the server runs
    began = [0.0]

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
            return
        took = time.perf_counter() - began[0]
        if info["generation"] == 2 or took > 0.01:
            log.write(f"{time.time():.4f} {info['generation']} {took:.4f}\n")

    gc.callbacks.append(note)
    watch_loop_callbacks(log)
    sys.argv = ["daphne", *daphne_args]
    CommandLineInterface.entrypoint()


SLOW_CALLBACK = 0.02  # seconds: a turn of the loop's callback logged by ``logged_server``


def watch_loop_callbacks(log: Any) -> None:
    """Log each event-loop callback that runs ``SLOW_CALLBACK`` or longer: the wall-clock
    time it ended, "loop", the seconds it took and what it was (a stall that is not a
    collection: the reads of a burst, a fan-out, a reply)."""
    import asyncio.events

    run = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:
        began = time.perf_counter()
        run(handle)
        took = time.perf_counter() - began
        if took >= SLOW_CALLBACK:
            what = repr(getattr(handle, "_callback", handle))[:160].replace(" ", "_")
            log.write(f"{time.time():.4f} loop {took:.4f} {what}\n")

    asyncio.events.Handle._run = timed  # type: ignore[method-assign,assignment]


@asynccontextmanager
async def timed_window(result: dict[str, Any], name: str) -> AsyncIterator[None]:
    """Note in ``result["windows"]`` the wall-clock times a burst began and ended, for the
    report of the server's collections and stalls during it (``gc_report``)."""
    began = time.time()
    try:
        yield
    finally:
        result.setdefault("windows", {})[name] = (began, time.time())


def gc_report(
    log_path: Path, deadline: float | None, windows: dict[str, tuple[float, float]]
) -> list[str]:
    """The server's logged collections: how many of generation 2 and the longest, those
    that overlapped the second before the deadline (or the half second after it), and the
    collections and slow loop callbacks during each burst of ``windows``."""
    rows, slow = [], []
    for line in log_path.read_text().splitlines():
        end, kind, took, *what = line.split()
        if kind == "loop":
            slow.append((float(end), float(took), what[0] if what else "?"))
        else:
            rows.append((float(end), int(kind), float(took)))
    full = [took for _, generation, took in rows if generation == 2]
    lines = [
        f"server's generation-2 collections in this N's run: {len(full)},"
        f" the longest {max(full, default=0.0) * 1000:.1f} ms"
    ]
    if deadline is not None:
        near = [
            f"gen{generation} {took * 1000:.0f} ms from {(end - took - deadline) * 1000:+.0f}"
            f" to {(end - deadline) * 1000:+.0f} ms"
            for end, generation, took in rows
            if end >= deadline - 1.0 and end - took <= deadline + 0.5
        ]
        lines.append("  collections around the deadline: " + ("; ".join(near) if near else "none"))
        lines.append(
            f"  loop callbacks of {SLOW_CALLBACK * 1000:.0f} ms or more around the deadline:"
        )
        lines.extend(
            f"    {took * 1000:.0f} ms from {(end - took - deadline) * 1000:+.0f} ms: {what}"
            for end, took, what in slow
            if end >= deadline - 1.0 and end - took <= deadline + 0.5
        )
    for name, (began, ended) in windows.items():
        during = [
            f"gen{generation} {took * 1000:.0f} ms at +{(end - took - began) * 1000:.0f} ms"
            for end, generation, took in rows
            if end >= began and end - took <= ended
        ]
        stalls = [
            f"{took * 1000:.0f} ms at +{(end - took - began) * 1000:.0f} ms ({what})"
            for end, took, what in slow
            if end >= began and end - took <= ended
        ]
        lines.append(
            f"  during the {name} ({(ended - began) * 1000:.0f} ms): collections "
            + ("; ".join(during) if during else "none")
            + f"; loop callbacks of {SLOW_CALLBACK * 1000:.0f} ms or more: "
            + ("; ".join(stalls) if stalls else "none")
        )
    return lines


def run(n: int, options: Options, env: dict[str, str], timers: str) -> None:
    started = time.monotonic()
    table_id, names = set_up_table(n, options.history, options.protection)
    ports, reference_port = [free_port() for _ in range(options.processes)], free_port()
    gc_log = Path(tempfile.mkdtemp(prefix="tablehub-gc-")) / "gc.log"
    launcher = [__file__, "--gc-logged-server", str(gc_log)] if options.gc_log else None
    servers = [start_daphne(port, env, launcher) for port in ports]
    processes = list(servers)
    processes.append(
        subprocess.Popen(
            [sys.executable, __file__, "--reference-server", str(reference_port)], cwd=ROOT
        )
    )
    if timers == "celery":
        processes.append(start_worker(env))
    try:
        for port, server in zip(ports, servers, strict=True):
            wait_for_port(port, process=server)
        wait_for_port(reference_port)
        reference_pid = processes[len(servers)].pid
        server_pids = [server.pid for server in servers]
        try:
            result = asyncio.run(
                measure(ports, server_pids, table_id, names, options, reference_port, reference_pid)
            )
        except Exception as failed:  # a server that stopped says why, if it printed it
            stopped = exited(servers)
            if stopped is not None:
                raise RuntimeError(f"a server stopped during the run:\n{stopped}") from failed
            raise
    finally:
        for process in processes:
            process.kill()
            process.wait()
    layer = "Redis" if os.environ.get("REDIS_URL") else "in-memory"
    database = os.environ["DATABASE_URL"].partition(":")[0]
    servers_used = f"{options.processes} server processes, " if options.processes > 1 else ""
    history = f", {options.history} ledger entries of history each" if options.history else ""
    protection = ", every player protection on" if options.protection else ""
    protection += ", the dealer's tablet open" if options.tablet else ""
    print(
        f"N = {n} stations ({servers_used}{database}, {layer} channel layer, {timers} timers"
        f"{history}{protection})"
    )
    before, first, joined = result["rss"]
    print(
        f"  server RSS: {before / 1024:.1f} MiB before, {first / 1024:.1f} MiB after the first"
        f" join, {joined / 1024:.1f} MiB with {n} joined: {(joined - before) / n:.1f} KiB per"
        f" station ({(joined - first) / max(n - 1, 1):.1f} KiB after the first join)"
    )
    ref_before, ref_after = result["reference_rss"]
    print(f"  reference server RSS: {(ref_after - ref_before) / n:.1f} KiB per connection")
    if "bets" in options.modes:
        latencies, refused = result["bets"]
        print(f"  {summary('bet sent -> reply, all stations at once', latencies)}")
        print(f"    {refusals(refused)}; {result['bets_cpu']}")
        print("    " + burst_reference(latencies, result["bets_reference"]))
    if "fanout" in options.modes:
        ours, reference = result["fanout"], result["reference"]
        print(f"  fan-out ({options.scans} scans each, taking turns)")
        print("  " + summary("fan-out of a scan, ours", ours))
        print("  " + summary("fan-out, websockets-only reference", reference))
        print(f"  ratio ours / reference: {ratios(ours, reference)}")
    if "decisions" in options.modes:
        latencies, refused = result["decisions"]
        print("  " + summary("decision sent -> reply, all stations at once", latencies))
        print(f"    {refusals(refused)}; {result['decisions_cpu']}")
        print("    " + burst_reference(latencies, result["decisions_reference"]))
    if "deadline" in options.modes:
        offset, rtt = result["clock"]
        print(
            f"  deadline mode: decision timer {options.decision_timer:g} s, each station"
            f" answers at a uniform moment in the last {options.window * 1000:.0f} ms"
            f" by the {options.clock}'s clock (server clock - client clock by ping"
            f" {offset * 1000:+.2f} ms, round trip {rtt * 1000:.2f} ms)"
        )
        for line in result["deadline"] + result["lags"]:
            print(f"    {line}")
    if options.gc_log:
        for line in gc_report(gc_log, result.get("deadline_at"), result.get("windows", {})):
            print(f"  {line}")
    print(f"  ({time.monotonic() - started:.0f} s for this N)", flush=True)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--reference-server":
        reference_server(int(sys.argv[2]))
        return
    if len(sys.argv) > 3 and sys.argv[1] == "--gc-logged-server":
        logged_server(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, nargs="+", default=[50, 200, 500])
    parser.add_argument("--scans", type=int, default=50)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument(
        "--window-ms", type=float, default=500.0, help="deadline mode: answers in the last W ms"
    )
    parser.add_argument(
        "--decision-timer",
        type=float,
        default=5.0,
        help="deadline mode: the step's timer, seconds (long enough to join and be prompted)",
    )
    parser.add_argument(
        "--clock",
        choices=("prompt", "ping"),
        default="prompt",
        help="deadline mode: a station counts down from its prompt's server_time (prompt) or"
        " from the server's clock as ping measured it (ping)",
    )
    parser.add_argument("--seed", type=int, default=1, help="deadline mode: answer moments")
    parser.add_argument(
        "--gc-log",
        action="store_true",
        help="the server logs its garbage collections; report those around the deadline",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="daphne processes, stations spread over them in turn (more than 1 needs REDIS_URL"
        " and DATABASE_URL: the processes share the channel layer and the database)",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        help="ledger entries of earlier sessions each station has before the bursts (about"
        " 1500 a day at a busy station)",
    )
    parser.add_argument(
        "--protection",
        action="store_true",
        help="the jurisdiction has every player protection on (idle time, reality checks,"
        " longest session, disputes with a window)",
    )
    parser.add_argument(
        "--tablet",
        action="store_true",
        help="the dealer's tablet is open at the table, asking for its state as the tablet"
        " page does",
    )
    parser.add_argument(
        "--py-spy",
        metavar="DIR",
        help="sample the server processes with py-spy (pip install py-spy) during each burst;"
        " the collapsed stacks go to DIR",
    )
    args = parser.parse_args()
    if args.py_spy:
        Path(args.py_spy).mkdir(parents=True, exist_ok=True)
    if args.processes > 1 and not (os.environ.get("REDIS_URL") and os.environ.get("DATABASE_URL")):
        parser.error("--processes > 1 needs REDIS_URL and DATABASE_URL (the production stack)")
    options = Options(
        args.scans,
        set(args.modes),
        args.window_ms / 1000,
        args.decision_timer,
        args.clock,
        args.seed,
        args.gc_log,
        args.processes,
        Path(args.py_spy) if args.py_spy else None,
        args.history,
        args.protection,
        args.tablet,
    )
    env, timers = bench_environment()
    for n in args.stations:
        run(n, options, env, timers)


if __name__ == "__main__":
    main()
