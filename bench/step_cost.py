"""What the table's own steps cost the database thread at a table of N stations, each one
transaction that every station waits for: closing bets (every station's stake, the
``bets_closed`` record), the deal's last card (every station's prompt), and a decision
step's expiry where no station answered (every station's timeout, the dealer's turn and the
settlement).

    .venv/bin/python bench/step_cost.py --stations 1000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tablehub_bench \\
        .venv/bin/python bench/step_cost.py --stations 1000

Each step is timed once a run, elapsed and CPU of this thread (on PostgreSQL the difference
is mostly the server's work); ``--runs`` repeats on a table of its own each time.
"""

from __future__ import annotations

import argparse
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
    from rounds import writer
    from rounds.engine import CardDrawn, parse_card
    from rounds.models import Round

    table_id, names = set_up_table(count)
    # The server's process settings (garbage collections), as bench/batch_cost.py.
    import tablehub.asgi  # noqa: F401

    stations = joined_stations(table_id)
    round_id = new_round(table_id)
    now = timezone.now()
    bet = {"type": "place", "client_id": "b", "box": 1, "amount": "10"}
    write_all(batch_messages((stations[name], bet, now) for name in names))
    timed("closing bets", lambda: writer.close_bets(round_id))
    for card in DEAL[:-1]:
        writer.record(round_id, CardDrawn(parse_card(card)))
    timed(
        "the deal's last card (every station asked)",
        lambda: writer.record(round_id, CardDrawn(parse_card(DEAL[-1]))),
    )
    step_key = Round.objects.get(pk=round_id).step_key
    timed(
        "the decision step's expiry, no station answered (timeouts, settlement)",
        lambda: writer.expire(round_id, step_key),
    )
    assert Round.objects.get(pk=round_id).phase == Round.Phase.SETTLED


if __name__ == "__main__":
    main()
