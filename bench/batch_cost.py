"""What a station message costs on the database thread: a table of N stations, every station's
bet and then every station's decision written in batches (``stations.batches.write``, as the
server writes a burst), timed per batch, with the queries of one batch counted and, with
``--profile bet|decision|both|settle``, the functions that take the time (``settle``: the
last decision batch only, the one that settles the round).

    .venv/bin/python bench/batch_cost.py --stations 200
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tablehub_bench \
        .venv/bin/python bench/batch_cost.py --stations 200

The last decision batch also settles the round for every station (the dealer stands on 19
once all have decided): its time is printed on its own, and the least of the runs last. With
``--action double`` every station doubles instead of standing: money moves with each
decision (a stake), and the round waits for its cards (no settling batch).

No server and no sockets: only the writing, so the figures say what the database thread can
do, the ceiling of a burst's replies per second.

With ``--runs N`` the bets and decisions are written N times, each on a table of its own, and
the least CPU per message of the N runs is printed last: on a shared machine whose speed
changes from minute to minute (this one's runs of one build differ by up to 70 %), the least
of several runs is what a change can be compared by.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def environment() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tablehub.settings")
    os.environ.setdefault("TABLEHUB_TIMERS", "none")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DEBUG", "false")
    if "DATABASE_URL" not in os.environ:
        workdir = Path(tempfile.mkdtemp(prefix="tablehub-batch-"))
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"


def joined_stations(table_id: int) -> dict[str, Any]:
    """The table's stations by name, each as a joined socket holds it: its table and its
    jurisdiction read once."""
    from stations.models import Station  # the models once Django is set up (``main``)

    joined = Station.objects.filter(table_id=table_id).select_related("table__jurisdiction")
    return {station.name: station for station in joined}


def batch_messages(sent: Iterable[tuple[Any, dict[str, Any], datetime]]) -> list[Any]:
    """Batch messages (station, message, receipt time) made outside an event loop: a
    ``Message`` makes its reply's future on the running loop, and none is awaited here."""
    from stations.batches import Message  # once Django is set up (``main``)

    made = []
    for station, content, received_at in sent:
        message = Message.__new__(Message)
        message.station, message.content, message.received_at = station, content, received_at
        made.append(message)
    return made


def write_all(sent: list[Any], size: int = 256) -> None:
    """Write batch messages as the server writes a burst, ``size`` a transaction; every one
    must be answered ``ok``."""
    from stations import batches  # once Django is set up (``main``)

    for start in range(0, len(sent), size):
        replies = batches.write(sent[start : start + size])
        assert all(isinstance(r, dict) and r["ok"] for r in replies), replies


class _Statements:
    """Counts the statements a batch runs (an execute wrapper: no debug cursor, whose
    formatting of every statement would be timed with the batch), keeping the first ones."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.count += 1
        if len(self.first) < 40:
            self.first.append(sql)
        return execute(sql, params, many, context)


def timed_batches(
    messages: list[tuple[Any, dict[str, Any]]],
    size: int,
    profile: cProfile.Profile | None,
    last_only: bool = False,
) -> tuple[list[tuple[float, float]], int, list[dict[str, Any]]]:
    """Write ``messages`` in batches of ``size``: the seconds of each message, elapsed and of
    this thread's CPU (its batch's shared out), the statements of the first full batch, and
    the replies. ``profile`` profiles every batch, or the last alone (``last_only``)."""
    from django.db import connection
    from django.utils import timezone

    from stations import batches

    per_message: list[tuple[float, float]] = []
    replies: list[dict[str, Any]] = []
    queries = 0
    for start in range(0, len(messages), size):
        profiled = profile if not last_only or start + size >= len(messages) else None
        sent = messages[start : start + size]
        chunk = batch_messages((station, content, timezone.now()) for station, content in sent)
        statements = _Statements()
        with connection.execute_wrapper(statements):
            began, cpu = time.perf_counter(), time.thread_time()
            if profiled is not None:
                profiled.enable()
            results = batches.write(chunk)
            if profiled is not None:
                profiled.disable()
            took, cpu = time.perf_counter() - began, time.thread_time() - cpu
        if start == 0:
            queries = statements.count
            if os.environ.get("BATCH_COST_SQL"):  # the statements of the first batch
                for sql in statements.first:
                    print("   ", sql[:160])
        per_message += [(took / len(chunk), cpu / len(chunk))] * len(chunk)
        replies += [r for r in results if isinstance(r, dict)]
    return per_message, queries, replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stations", type=int, default=200)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        help="ledger entries of earlier play each station has (bench.fanout.add_history)",
    )
    parser.add_argument(
        "--protection",
        action="store_true",
        help="the jurisdiction has every player protection on (bench.fanout.PROTECTION)",
    )
    parser.add_argument(
        "--action",
        choices=["stand", "double"],
        default="stand",
        help="every station's decision (a double moves money: a stake each)",
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="write the bets and decisions this many times"
    )
    parser.add_argument(
        "--profile",
        choices=["bet", "decision", "both", "settle"],
        help="print the top functions of the bets, the decisions, both, or the batch that "
        "settles the round (with --batch N-1, the settlement alone)",
    )
    options = parser.parse_args()
    environment()
    import django

    django.setup()
    from bench.fanout import DEAL, new_round, set_up_table
    from rounds import writer
    from rounds.engine import CardDrawn, parse_card

    profile = cProfile.Profile() if options.profile else None
    bet_profile = profile if options.profile in ("bet", "both") else None
    decision_profile = profile if options.profile in ("decision", "both", "settle") else None
    database = os.environ["DATABASE_URL"].split(":", 1)[0]
    history = f", {options.history} entries of history each" if options.history else ""
    history += ", every player protection on" if options.protection else ""
    print(f"{options.stations} stations{history}, batches of {options.batch}, {database}")
    least: dict[str, float] = {}
    settling = float("inf")  # the least CPU of the batch that settles the round, ms
    for _run in range(options.runs):
        table_id, names = set_up_table(options.stations, options.history, options.protection)
        # The server's process settings (switch interval, frozen start-up objects, the young
        # garbage collections' threshold), once the database is set up: without them the
        # collections a burst triggers are timed, and profiled, as the functions they
        # interrupt.
        import tablehub.asgi  # noqa: F401

        stations = joined_stations(table_id)
        round_id = new_round(table_id)

        bets = [
            (stations[name], {"type": "place", "client_id": "b", "box": 1, "amount": "10"})
            for name in names
        ]
        seconds, queries, replies = timed_batches(bets, options.batch, bet_profile)
        assert all(r["ok"] for r in replies), [r for r in replies if not r["ok"]][:3]
        report("bet", seconds, queries, options.batch, least)

        writer.close_bets(round_id)
        # As the fan-out bench deals: every station is asked on a 17, the dealer has 19.
        for card in DEAL:
            writer.record(round_id, CardDrawn(parse_card(card)))
        decisions = [
            (stations[name], {"type": "decide", "client_id": "d", "action": options.action})
            for name in names
        ]
        seconds, queries, replies = timed_batches(
            decisions, options.batch, decision_profile, last_only=options.profile == "settle"
        )
        assert all(r["ok"] for r in replies), [r for r in replies if not r["ok"]][:3]
        report("decision", seconds, queries, options.batch, least)
        if options.action != "stand":
            continue  # every hand waits for its card: no batch settles the round
        # The last decision ends every station's turn: the dealer stands on 19 and the round
        # is settled for all N stations in that batch's transaction, before its replies.
        last = len(decisions) - (len(decisions) - 1) // options.batch * options.batch
        took, used = seconds[-1]
        settling = min(settling, used * last * 1000)
        print(
            f"  the last decision batch ({last} messages, it settles the round):"
            f" {took * last * 1000:.1f} ms, CPU of this thread {used * last * 1000:.1f} ms"
        )
    if options.runs > 1:
        settled = f"; the settling batch {settling:.1f} ms" if settling < float("inf") else ""
        print(
            f"  least of {options.runs} runs, CPU of this thread a message: "
            + ", ".join(f"{what} {ms:.2f} ms" for what, ms in least.items())
            + settled
        )

    if profile is not None:
        pstats.Stats(profile).sort_stats(
            os.environ.get("BATCH_COST_SORT", "cumulative")
        ).print_stats(40)
        if os.environ.get("BATCH_COST_DUMP"):  # the whole profile, for pstats or snakeviz
            profile.dump_stats(os.environ["BATCH_COST_DUMP"])


def report(
    what: str,
    seconds: list[tuple[float, float]],
    queries: int,
    size: int,
    least: dict[str, float],
) -> None:
    """Print one run's figures; ``least`` keeps each kind's least CPU a message so far."""
    ms = [took * 1000 for took, _cpu in seconds]
    cpu = [used * 1000 for _took, used in seconds]
    least[what] = min(least.get(what, float("inf")), statistics.median(cpu))
    print(
        f"  {what}: {statistics.median(ms):.2f} ms a message (median of batches),"
        f" {sum(ms):.0f} ms for all {len(ms)}; CPU of this thread {statistics.median(cpu):.2f}"
        f" ms a message; {queries / size:.1f} queries a message ({queries} in a batch of {size})"
    )


if __name__ == "__main__":
    main()
