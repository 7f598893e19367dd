"""Live replay speed: every golden round through the real table, with short timers.

    .venv/bin/python bench/replay.py [--timer-ms 50] [--repeat 1]

Uses the throwaway database of ``play_scenario --live`` (a temporary SQLite file, or a
temporary PostgreSQL database when DATABASE_URL names PostgreSQL; migrated first, removed at
the end) and its in-process server (rounds/live_replay.py): each
round sets up its table, cashes in, bets, answers the prompts over websockets, lets the
timer answer where the scenario's list is empty, and reads the outcome back from the
database. Prints how many rounds gave an output different from the engine path and the
time per round (median, p90, max), measured in this one run after the server started.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timer-ms", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tablehub.settings")
    os.environ.setdefault("TABLEHUB_TIMERS", "inprocess")
    import django

    django.setup()
    from rounds.live_replay import throwaway_database

    with throwaway_database():
        replay_all(args.timer_ms, args.repeat)


def replay_all(timer_ms: int, repeat: int) -> None:
    from payouts.maingame import abandoned
    from payouts.specials import parse_paytables
    from rounds.engine import EngineError, play_scenario
    from rounds.live_replay import play_live

    files = sorted(
        p
        for p in (ROOT / "tests" / "scenarios").glob("*.json")
        if not p.name.endswith(".expected.json")
    )
    differ: list[str] = []
    seconds: list[float] = []
    for _ in range(repeat):
        for path in files:
            data = json.loads(path.read_text(), parse_float=Decimal)
            start = time.perf_counter()
            try:
                outcome = play_live(data, timer_ms=timer_ms)
            except EngineError as exc:
                differ.append(f"{path.stem}: {exc.line()}")
                continue
            seconds.append(time.perf_counter() - start)
            expected = play_scenario(
                json.loads(path.read_text(), parse_float=Decimal),
                parse_paytables,
                abandoned.for_scenario,
            )
            if outcome != expected:
                differ.append(f"{path.stem}: differs from the engine path")
    seconds.sort()
    ms = [s * 1000 for s in seconds]
    print(
        f"--timer-ms {timer_ms}: {len(files) * repeat} rounds, {len(differ)} differ; "
        f"per round median {statistics.median(ms):.0f} ms, p90 {ms[int(len(ms) * 0.9)]:.0f} ms, "
        f"max {ms[-1]:.0f} ms; all rounds {sum(seconds):.1f} s"
    )
    for line in differ:
        print("  " + line)


if __name__ == "__main__":
    main()
