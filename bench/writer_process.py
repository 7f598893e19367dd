"""Does a writer process of its own shorten a burst? A spike for the stadium issue: the same
1000-station bet burst answered by a plain websocket server whose table writing runs on a
thread of its own process (``thread``: the event loop and the writing share one
interpreter, as in the server), in a process of its own fed through a pipe (``process``),
or on the event loop's own thread, which waits for each batch (``inline``: one thread, no
handing of the interpreter back and forth, no overlap either).

    .venv/bin/python bench/writer_process.py --stations 1000 --pairs 3 [--modes thread inline]

The server here is the `websockets` library and our writing alone: a station's frame is
stamped, waits in the table's queue, and the queue is cut into batches (``batches.cut``)
written one after the other by ``stations.batches.write`` (the server's own group commit:
one transaction per batch, the replies encoded once), then each reply is sent. No channels,
no daphne, no events fan-out (a bet's only event is the croupier's "bets changed"), no
receipts register: what differs between the two modes is only where the writing runs.
Runs alternate between the modes, each on a table of its own, on the embedded default
(SQLite) unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import django
from django.utils import timezone
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.batch_cost import (  # noqa: E402 (the path above first)
    batch_messages,
    environment,
    joined_stations,
)
from bench.fanout import (  # noqa: E402
    Station,
    burst,
    cpu_seconds,
    new_round,
    set_up_table,
    summary,
)
from tablehub.loopback import free_port, wait_for_port  # noqa: E402

MODES = ("thread", "process", "inline")


class Writer:
    """The table's writing: each batch of (station name, message, receipt time) written as
    the server writes a batch, the replies as the texts a station is sent."""

    def __init__(self, table_id: int) -> None:
        self.stations = joined_stations(table_id)

    def write(self, items: list[tuple[str, dict[str, Any], Any]]) -> list[str]:
        # Our modules once Django is set up (``server``, ``writer_process``).
        from stations import batches
        from stations.commands import reply_text

        replies = batches.write(
            batch_messages((self.stations[name], content, at) for name, content, at in items)
        )
        return [
            reply_text(reply) or json.dumps(reply) if isinstance(reply, dict) else "{}"
            for reply in replies
        ]


def writer_process(connection: Connection, table_id: int) -> None:
    """The ``process`` mode's writer: batches in through the pipe, replies out."""
    django.setup()
    import tablehub.asgi  # noqa: F401 (the server's process settings, once Django is set up)

    writer = Writer(table_id)
    connection.send("ready")
    while True:
        items = connection.recv()
        if items is None:
            return
        connection.send(writer.write(items))


def server(port: int, table_id: int, mode: str) -> None:
    """The websocket server: ``ws://127.0.0.1:port/<station name>``."""
    django.setup()
    # The server's process settings and our modules, once Django is set up.
    import tablehub.asgi  # noqa: F401
    from stations.batches import cut

    database = ThreadPoolExecutor(1)  # as channels' one database thread
    if mode == "inline":
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    if mode == "process":
        ours, theirs = multiprocessing.Pipe()
        child = multiprocessing.get_context("fork").Process(
            target=writer_process, args=(theirs, table_id), daemon=True
        )
        child.start()
        assert ours.recv() == "ready"

        def write(items: list[Any]) -> list[str]:
            ours.send(items)
            return ours.recv()  # the pipe's wait lets go of the interpreter
    else:
        write = Writer(table_id).write

    waiting: list[tuple[str, dict[str, Any], Any, Any]] = []
    planned: list[int] = []
    writing: list[asyncio.Task] = []

    async def write_all() -> None:
        loop = asyncio.get_running_loop()
        while waiting:
            if not planned:
                planned.extend(cut(len(waiting)))
            size = planned.pop(0)
            batch, waiting[:] = waiting[:size], waiting[size:]
            items = [(name, content, at) for name, content, at, _ws in batch]
            if mode == "inline":
                texts = write(items)
            else:
                texts = await loop.run_in_executor(database, write, items)
            for (_name, _content, _at, ws), text in zip(batch, texts, strict=True):
                await ws.send(text)

    async def handler(ws: Any) -> None:
        name = ws.request.path.strip("/")
        async for text in ws:
            waiting.append((name, json.loads(text), timezone.now(), ws))
            if not writing or writing[0].done():
                writing[:] = [asyncio.ensure_future(write_all())]

    async def main() -> None:
        async with serve(handler, "127.0.0.1", port, max_queue=None):
            await asyncio.Future()

    asyncio.run(main())


async def one_burst(port: int, names: list[str], pid: int) -> tuple[list[float], float]:
    """Every station bets at once: each reply's latency, and the server's CPU a message (both
    processes' in the ``process`` mode: the writer is the server's child)."""
    url = f"ws://127.0.0.1:{port}"
    stations = [Station(await connect(f"{url}/{name}", max_queue=None), name) for name in names]
    pids = [pid, *_children(pid)]
    cpu = sum(cpu_seconds(pids))
    bet = {"type": "place", "client_id": "b", "box": 1, "amount": "10"}
    latencies, refused = await burst(stations, bet, 60.0)
    used = sum(cpu_seconds(pids)) - cpu
    assert not refused, refused
    for station in stations:
        await station.ws.close()
    return latencies, used / len(names)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return [int(child) for child in children.read().split()]
    except FileNotFoundError:
        return []


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--server":
        server(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    options = parser.parse_args()
    environment()
    django.setup()
    print(f"{options.stations} stations, {os.environ['DATABASE_URL'].split(':')[0]}")
    for pair in range(options.pairs):
        for mode in options.modes:
            table_id, names = set_up_table(options.stations)
            new_round(table_id)
            port = free_port()
            process = subprocess.Popen(
                [sys.executable, __file__, "--server", str(port), str(table_id), mode],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                wait_for_port(port, process=process)
                gc.collect()
                latencies, cpu = asyncio.run(one_burst(port, names, process.pid))
            finally:
                process.kill()
                process.wait()
            print(
                f"  pair {pair + 1}, {mode:7}: {summary('bet burst', latencies)};"
                f" CPU a message {cpu * 1000:.2f} ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
