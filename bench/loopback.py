"""Starting this project's server as a separate process, for the benchmarks and the
multi-process tests; it listens on 127.0.0.1 only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_daphne(
    port: int, env: dict[str, str], launcher: list[str] | None = None
) -> subprocess.Popen:
    """A daphne server process for this project on 127.0.0.1:port (quiet); ``launcher``
    replaces ``-m daphne`` (a script that runs daphne with its own set-up)."""
    return _quiet(
        [
            sys.executable,
            *(launcher or ["-m", "daphne"]),
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "tablehub.asgi:application",
        ],
        env,
    )


def start_worker(env: dict[str, str]) -> subprocess.Popen:
    """A Celery worker for the server's timers (REDIS_URL in ``env``), quiet."""
    return _quiet(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "tablehub",
            "worker",
            "--pool=solo",
            "--loglevel=warning",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],  # fmt: skip
        env,
    )


def _quiet(command: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
