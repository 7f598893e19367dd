"""Starting this project's server as a separate process, for the benchmarks and the
multi-process tests; it listens on 127.0.0.1 only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_daphne(port: int, env: dict[str, str]) -> subprocess.Popen:
    """A daphne server process for this project on 127.0.0.1:port (quiet)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "tablehub.asgi:application",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
