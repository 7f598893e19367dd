"""Starting this project's server as a separate process, for the benchmarks and the
multi-process tests; it listens on 127.0.0.1 only. What a process prints goes to a file of
its own, removed when this process exits, so that one that stops early can say why
(``exited``)."""

from __future__ import annotations

import atexit
import itertools
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LOGS: dict[int, Path] = {}  # a started process's output, by its pid
_LOG_DIR = Path(tempfile.mkdtemp(prefix="tablehub-processes-"))
_LOG_NUMBERS = itertools.count()  # not the pid: a pid may come again
atexit.register(shutil.rmtree, _LOG_DIR, ignore_errors=True)


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


def exited(processes: Iterable[subprocess.Popen]) -> str | None:
    """Which of the processes started here have stopped, with their exit codes and the end
    of what each printed (None: all still run)."""
    lines = []
    for process in processes:
        if process.poll() is None:
            continue
        log = _LOGS.get(process.pid)
        said = log.read_text(errors="replace").splitlines()[-15:] if log else []
        lines.append(f"process {process.pid} exited with {process.returncode}; its last lines:")
        lines += [f"    {line}" for line in said]
    return "\n".join(lines) or None


def _quiet(command: list[str], env: dict[str, str]) -> subprocess.Popen:
    log = _LOG_DIR / f"{next(_LOG_NUMBERS)}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    _LOGS[process.pid] = log
    return process
