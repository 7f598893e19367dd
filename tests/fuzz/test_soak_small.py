"""The soak (bench/soak.py) in small: 10 rounds x 10 stations at a video table over real
websockets against daphne, with silent stations, drops and reconnects, then its checks
(the ledger balances, every station's credits are its entries, every round replays to what
is stored). Always on the embedded default (its own SQLite file, the in-memory channel
layer), so that it never writes into a database of the run's; bounded to two minutes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_soak_keeps_the_books():
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    command = [
        sys.executable, "bench/soak.py", "--rounds", "10", "--stations", "10", "--play", "0.6",
        "--silent", "0.25", "--drops", "0.05", "--betting", "1", "--decision", "0.5",
        "--seed", "11", "--timeout", "90", "--json",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=150, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    checks = figures["checks"]
    assert figures["rounds"] >= 10 and figures["problem_count"] == 0, figures
    assert checks["rounds replayed to what is stored"] == checks["rounds settled"]
    assert checks["stations whose credits are their entries"] == 10
    assert checks["ledger balanced"] == 1
    assert checks["timeouts"] >= 1  # silent stations: their timers answered
    assert figures["reconnects"] >= 1 and figures["decisions"] > 0
