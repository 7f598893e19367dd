"""Loopback helpers: a free port on 127.0.0.1, and waiting until a server listens there.
Used by the live replay's in-process server, the benchmarks and the multi-process tests."""

from __future__ import annotations

import socket
import subprocess
import time
from contextlib import closing


def free_port() -> int:
    with closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, limit: float = 60.0, process: subprocess.Popen | None = None) -> None:
    """Wait (bounded) until something accepts connections on 127.0.0.1:port; with
    ``process`` (the server that is to listen there), fail as soon as it has exited."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(
                f"the server for 127.0.0.1:{port} exited with {process.returncode} before"
                " it listened"
            )
        with closing(socket.socket()) as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")
