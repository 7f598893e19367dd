"""A server process the benchmarks and the multi-process tests start says why it stopped
early (bench/loopback.py), and waiting for its port does not outlast it."""

import os
import time

import pytest

from bench.loopback import exited, start_daphne
from tablehub.loopback import free_port, wait_for_port


def test_a_server_that_cannot_start_fails_the_wait_at_once_and_says_why():
    port = free_port()
    env = dict(os.environ) | {"DJANGO_SETTINGS_MODULE": "tablehub.no_such_settings"}
    server = start_daphne(port, env)
    try:
        began = time.monotonic()
        with pytest.raises(RuntimeError, match=rf"127\.0\.0\.1:{port} exited with 1 before"):
            wait_for_port(port, limit=60, process=server)
        assert time.monotonic() - began < 30  # not the whole limit
        stopped = exited([server])
        assert stopped is not None
        assert f"process {server.pid} exited with 1" in stopped
        assert "No module named 'tablehub.no_such_settings'" in stopped
    finally:
        server.kill()
        server.wait()
