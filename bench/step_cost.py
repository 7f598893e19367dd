"""What the table's own steps cost the database thread at a table of N stations, each one
transaction that every station waits for: closing bets (every station's stake, the
``bets_closed`` record), a burn scanned as the card reader's are, the deal's last card
(every station's prompt), and a decision step's expiry where no station answered (every
station's timeout, the dealer's turn and the settlement).

    .venv/bin/python bench/step_cost.py --stations 1000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tablehub_bench \\
        .venv/bin/python bench/step_cost.py --stations 1000

Each step is timed once a run, elapsed and CPU of this thread (on PostgreSQL the difference
is mostly the server's work); ``--runs`` repeats on a table of its own each time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.batch_cost import (  # noqa: E402 (the path above first)
    batch_messages,
    environment,
    joined_stations,
    write_all,
)


def timed(what: str, step: Callable[[], Any]) -> None:
    began, cpu = time.perf_counter(), time.thread_time()
    step()
    took, cpu = time.perf_counter() - began, time.thread_time() - cpu
    print(f"  {what}: {took * 1000:.1f} ms, CPU of this thread {cpu * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    options = parser.parse_args()
    environment()
    import django

    django.setup()
    for run in range(options.runs):
        print(f"{options.stations} stations, run {run + 1}")
        one_run(options.stations)


def one_run(count: int) -> None:
    """A table of ``count`` stations, each with a bet: its round's steps, each timed."""
    from django.utils import timezone

    from bench.fanout import DEAL, new_round, set_up_table
    from croupier.services import scan
    from rounds import writer
    from rounds.models import Round
    from tablehub.models import Table

    table_id, names = set_up_table(count)
    # The server's process settings (garbage collections), as bench/batch_cost.py.
    import tablehub.asgi  # noqa: F401

    stations = joined_stations(table_id)
    round_id = new_round(table_id)
    now = timezone.now()
    bet = {"type": "place", "client_id": "b", "box": 1, "amount": "10"}
    write_all(batch_messages((stations[name], bet, now) for name in names))
    timed("closing bets", lambda: writer.close_bets(round_id))
    table = Table.objects.get(pk=table_id)
    burned = burns(table)
    # The deal scanned as the reader's cards are, so that the shoe counts every card.
    for seq, card in enumerate(DEAL[:-1], start=burned + 1):
        scan(table, seq, card)
    timed(
        "the deal's last card, scanned (every station asked)",
        lambda: scan(table, burned + len(DEAL), DEAL[-1]),
    )
    step_key = Round.objects.get(pk=round_id).step_key
    timed(
        "the decision step's expiry, no station answered (timeouts, settlement)",
        lambda: writer.expire(round_id, step_key),
    )
    assert Round.objects.get(pk=round_id).phase == Round.Phase.SETTLED


def burns(table: Any, count: int = 20) -> int:
    """``count`` burns scanned as the card reader's are (``croupier.services.scan``, every
    card's path: the shoe and the round locked, the event written): their median, elapsed
    and CPU of this thread, and the statements of the last. Returns the reader's last
    sequence number."""
    # Local, as ``one_run``'s: Django is set up in ``main``.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from croupier.services import scan

    cards = ["2C", "3D", "4H", "5S", "6C"]  # a few copies of each: any shoe holds them
    took: list[float] = []
    used: list[float] = []
    for seq in range(1, count):
        began, cpu = time.perf_counter(), time.thread_time()
        scan(table, seq, cards[seq % len(cards)], burn=True)
        took.append(time.perf_counter() - began)
        used.append(time.thread_time() - cpu)
    with CaptureQueriesContext(connection) as statements:  # the last, its statements counted
        began, cpu = time.perf_counter(), time.thread_time()
        scan(table, count, cards[count % len(cards)], burn=True)
        took.append(time.perf_counter() - began)
        used.append(time.thread_time() - cpu)
    print(
        f"  a burn scanned (median of {count}): {statistics.median(took) * 1000:.2f} ms,"
        f" CPU of this thread {statistics.median(used) * 1000:.2f} ms,"
        f" {len(statements.captured_queries)} statements"
    )
    return count


if __name__ == "__main__":
    main()
