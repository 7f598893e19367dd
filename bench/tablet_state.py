"""What the croupier tablet's state costs the database thread at a table of N stations, at
each moment of a round: bets open (every station has bet), dealt, all but one stood,
settled, and the next round's bets open (the tablet shows the last round beside them).
The tablet asks for its state 120 ms after each change it is told of (tablet.js), so while
stations bet it may ask several times a second.

    .venv/bin/python bench/tablet_state.py --stations 1000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tablehub_bench \\
        .venv/bin/python bench/tablet_state.py --stations 1000

Each figure is the CPU of this thread for the first ask at that moment (it brings what the
tablet's state keeps up to date with the events since the last ask) and the least of the
next ``--asks`` - 1 (nothing new to read).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.batch_cost import (  # noqa: E402 (the path above first)
    batch_messages,
    environment,
    joined_stations,
    write_all,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stations", type=int, default=1000)
    parser.add_argument("--asks", type=int, default=4)
    options = parser.parse_args()
    environment()
    import django

    django.setup()
    from django.utils import timezone

    from bench.fanout import DEAL, new_round, set_up_table
    from croupier.tablet_state import croupier_state
    from rounds import writer
    from rounds.engine import CardDrawn, parse_card
    from tablehub.models import Table

    table_id, names = set_up_table(options.stations)
    # The server's process settings (its garbage collections' threshold, the start-up
    # objects frozen), as bench/batch_cost.py: without them a full collection of the
    # benchmark's own objects lands in an ask now and then.
    import tablehub.asgi  # noqa: F401

    stations = joined_stations(table_id)
    table = Table.objects.get(pk=table_id)

    def write(sent: list[tuple[str, dict[str, Any]]]) -> None:
        now = timezone.now()
        write_all(batch_messages((stations[name], content, now) for name, content in sent))

    def asked(moment: str) -> None:
        took = []
        for _ in range(options.asks):
            cpu = time.thread_time()
            croupier_state(table)
            took.append(time.thread_time() - cpu)
        print(f"  {moment}: first {took[0] * 1000:.1f} ms, then {min(took[1:]) * 1000:.1f} ms")

    print(f"{options.stations} stations, the tablet's state, CPU of this thread an ask")

    def bet(client_id: str) -> dict[str, Any]:
        return {"type": "place", "client_id": client_id, "box": 1, "amount": "10"}

    round_id = new_round(table_id)
    write([(name, bet("b")) for name in names])
    asked("bets open, every station has bet")
    writer.close_bets(round_id)
    for card in DEAL:
        writer.record(round_id, CardDrawn(parse_card(card)))
    asked("dealt, every station asked")
    stand = {"type": "decide", "client_id": "d", "action": "stand"}
    write([(name, stand) for name in names[:-1]])
    asked("all but one stood")
    write([(names[-1], stand)])
    asked("settled")
    new_round(table_id)
    asked("the next round's bets open, none yet (the last round beside them)")
    write([(name, bet("b2")) for name in names])
    asked("the next round's bets open, every station has bet")


if __name__ == "__main__":
    main()
