"""Fan-out: how fast a scanned card reaches every station, and decisions under load.

    .venv/bin/python bench/fanout.py [--stations 50 200 500] [--scans 50]

For each N: starts daphne on 127.0.0.1 (embedded default: SQLite, in-memory channel layer;
with REDIS_URL set, the Redis layer), connects N stations over real websockets, opens a
round with every station betting, and has the card reader send ``--scans`` burn cards one
by one: the fan-out time of a scan is from sending it to the moment the last station has
the event. The reference for what this machine can do, a minimal broadcast server written
with the ``websockets`` library alone, runs beside it with N stations of its own on the
same client, and the two take turns scan by scan, so that the rest of the machine's load
falls on both alike and their ratio means something on a noisy machine. Then the deal, and
all N stations decide at once: the time from each decision sent to its reply.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.loopback import start_daphne  # noqa: E402
from tablehub.loopback import free_port, wait_for_port  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def summary(label: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return (
        f"{label}: p50 {statistics.median(ms):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
        f"max {max(ms):.1f} ms ({len(ms)} samples)"
    )


# --- the client, the same for both servers ---------------------------------------------------


class Station:
    def __init__(self, ws) -> None:
        self.ws = ws
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for text in self.ws:
            self.inbox.put_nowait((time.perf_counter(), json.loads(text)))

    async def next(self, test, limit: float = 30.0) -> tuple[float, dict]:
        deadline = time.perf_counter() + limit
        while True:
            stamp, frame = await asyncio.wait_for(self.inbox.get(), deadline - time.perf_counter())
            if test(frame):
                return stamp, frame


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


# --- our server ------------------------------------------------------------------------------


def set_up_table(stations: int) -> tuple[int, list[str]]:
    import django

    django.setup()
    from django.core.management import call_command

    from rounds.engine import RuleSet
    from stations.models import Station as StationRow
    from stations.services import cash_in
    from tablehub.models import Jurisdiction, Table, TableConfig

    call_command("migrate", verbosity=0)  # the same database for every N of one run
    jurisdiction = Jurisdiction.objects.create(code=f"bench{stations}", name="Bench")
    table = Table.objects.create(name=f"bench-{stations}", jurisdiction=jurisdiction)
    table.set_reader_key("reader")
    table.save()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        timers={"betting": 25, "decision": 25},
    )
    names = [f"st{n:03d}" for n in range(stations)]
    for name in names:
        row = StationRow(table=table, name=name)
        row.set_credential(name)
        row.save()
        cash_in(row, "1000", key="start")
    return table.pk, names


async def measure(
    port: int, table_id: int, names: list[str], scans: int, reference_port: int
) -> dict:
    import websockets
    from asgiref.sync import sync_to_async
    from websockets.typing import Origin

    from rounds import writer
    from tablehub.models import Table

    url = f"ws://127.0.0.1:{port}/ws/tables/{table_id}"
    origin = Origin("http://127.0.0.1")
    stations = []
    for name in names:
        ws = await websockets.connect(f"{url}/station/", origin=origin, max_queue=None)
        station = Station(ws)
        await ws.send(
            json.dumps({"type": "join", "client_id": "j", "station": name, "credential": name})
        )
        await station.next(lambda f: f.get("client_id") == "j")
        stations.append(station)
    table = await sync_to_async(Table.objects.get)(pk=table_id)
    round = await sync_to_async(writer.open_round)(table)
    for station in stations:
        await station.ws.send(
            json.dumps({"type": "place", "client_id": "b", "box": 1, "amount": "10"})
        )
    for station in stations:
        await station.next(lambda f: f.get("client_id") == "b")
    await sync_to_async(writer.expire)(round.pk, "betting")

    shoe = await websockets.connect(f"{url}/shoe/", origin=origin)
    await shoe.send(json.dumps({"type": "hello", "key": "reader"}))
    await shoe.recv()
    cards = iter(
        [
            "2S",
            "3S",
            "4S",
            "5S",
            "6S",
            "7S",
            "8S",
            "9S",
            "TS",
            "JS",
            "QS",
            "KS",
            "AS",
            "2H",
            "3H",
            "4H",
            "5H",
            "6H",
            "7H",
            "8H",
            "9H",
            "TH",
            "JH",
            "QH",
            "KH",
            "AH",
            "2D",
            "3D",
            "4D",
            "5D",
            "6D",
            "7D",
            "8D",
            "9D",
            "TD",
            "JD",
            "QD",
            "KD",
            "AD",
            "2C",
            "3C",
            "4C",
            "5C",
            "6C",
            "7C",
            "8C",
            "9C",
            "TC",
            "JC",
            "QC",
            "KC",
            "AC",
        ]
        * 8
    )
    seq = 0

    async def scan(card: str, burn: bool) -> None:
        nonlocal seq
        seq += 1
        await shoe.send(json.dumps({"type": "card", "seq": seq, "card": card, "burn": burn}))

    async def burn(_k: int) -> None:
        await scan(next(cards), True)

    def is_burn(frame: dict) -> bool:
        return frame.get("event", {}).get("type") == "burn"

    reference = await connect_reference(reference_port, len(names))
    fanout, reference_fanout = await fan_out(
        [Target(stations, burn, is_burn), reference.target], scans
    )
    await reference.close()
    for card in ("TH", "9C", "7D", "KD"):  # box 1: T 7 (17); dealer 9, K in the hole
        await scan(card, False)
        await shoe.recv()
    for station in stations:
        await station.next(lambda f: f.get("event", {}).get("type") == "prompt")
    sent = {}
    for n, station in enumerate(stations):
        sent[n] = time.perf_counter()
        await station.ws.send(json.dumps({"type": "decide", "client_id": "d", "action": "stand"}))
    replies = await asyncio.gather(*(s.next(lambda f: f.get("client_id") == "d") for s in stations))
    decisions = [stamp - sent[n] for n, (stamp, _) in enumerate(replies)]
    for station in stations:
        await station.ws.close()
    await shoe.close()
    return {"fanout": fanout, "reference": reference_fanout, "decisions": decisions}


# --- the reference: a broadcast server with the websockets library alone -------------------


class Reference(NamedTuple):
    target: Target
    close: Callable[[], Awaitable[None]]


async def connect_reference(port: int, stations_count: int) -> Reference:
    """N stations and a sender connected to the reference server on ``port``."""
    import websockets

    url = f"ws://127.0.0.1:{port}/"
    stations = [
        Station(await websockets.connect(url, max_queue=None)) for _ in range(stations_count)
    ]
    sender = await websockets.connect(url)
    await asyncio.sleep(0.5)

    async def send(k: int) -> None:
        await sender.send(json.dumps({"type": "event", "event": {"type": "burn", "k": k}}))

    def is_event(frame: dict) -> bool:
        return frame.get("type") == "event"

    async def close() -> None:
        for station in stations:
            await station.ws.close()
        await sender.close()

    return Reference(Target(stations, send, is_event), close)


def reference_server(port: int) -> None:
    """The reference: a broadcast server with the websockets library alone."""
    from websockets.asyncio.server import broadcast, serve

    clients = set()

    async def handler(ws) -> None:
        clients.add(ws)
        try:
            async for message in ws:
                broadcast(clients - {ws}, message)
        finally:
            clients.discard(ws)

    async def main() -> None:
        async with serve(handler, "127.0.0.1", port, max_queue=None):
            await asyncio.Future()

    asyncio.run(main())


def bench_environment() -> dict[str, str]:
    """The server's environment, set once for the whole run (Django is set up once)."""
    workdir = Path(tempfile.mkdtemp(prefix="tablehub-fanout-"))
    env = {
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
        "TABLEHUB_TIMERS": "none",
        "DEBUG": "false",
        "SECRET_KEY": "bench-only",
    }
    if "DATABASE_URL" not in os.environ:
        env["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ.update(env)
    return dict(os.environ)


def run(n: int, scans: int, env: dict[str, str]) -> None:
    table_id, names = set_up_table(n)
    port, reference_port = free_port(), free_port()
    server = start_daphne(port, env)
    reference_process = subprocess.Popen(
        [sys.executable, __file__, "--reference-server", str(reference_port)], cwd=ROOT
    )
    try:
        wait_for_port(port)
        wait_for_port(reference_port)
        result = asyncio.run(measure(port, table_id, names, scans, reference_port))
    finally:
        for process in (server, reference_process):
            process.kill()
            process.wait()
    ours, reference = result["fanout"], result["reference"]
    layer = "Redis" if os.environ.get("REDIS_URL") else "in-memory"
    print(f"N = {n} stations ({layer} channel layer, {scans} scans each, taking turns)")
    print("  " + summary("fan-out of a scan, ours", ours))
    print("  " + summary("fan-out, websockets-only reference", reference))
    for label, p in (("p50", 0.5), ("p99", 0.99)):
        ratio = percentile(ours, p) / percentile(reference, p)
        print(f"  {label} ratio ours / reference: {ratio:.1f}x")
    print("  " + summary("decision sent -> reply, all stations at once", result["decisions"]))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--reference-server":
        reference_server(int(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, nargs="+", default=[50, 200, 500])
    parser.add_argument("--scans", type=int, default=50)
    args = parser.parse_args()
    env = bench_environment()
    for n in args.stations:
        run(n, args.scans, env)


if __name__ == "__main__":
    main()
