"""A blocking websocket client for the tests that run servers as separate processes
(scale-out, crash recovery): it keeps every frame it got and can lose its server and
connect again."""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from websockets.exceptions import InvalidHandshake, InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin


class HasPort(Protocol):
    port: int


class Client:
    """A websocket to ``path`` on 127.0.0.1 at ``server``'s port (read at each connect, so a
    server started again elsewhere is found), or at ``server`` when it is a port number."""

    def __init__(self, server: HasPort | int, path: str) -> None:
        self.server = server
        self.path = path
        self.ws: Any = None
        self.frames: list[dict] = []
        self.sent = 0

    @property
    def port(self) -> int:
        return self.server if isinstance(self.server, int) else self.server.port

    def connect(self, limit: float = 20.0) -> None:
        self.drop()
        deadline = time.monotonic() + limit
        while True:
            try:
                self.ws = connect(
                    f"ws://127.0.0.1:{self.port}{self.path}",
                    origin=Origin("http://127.0.0.1"),
                    open_timeout=5,
                    close_timeout=1,
                ).__enter__()
                return
            except (OSError, InvalidHandshake, InvalidStatus, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def drop(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:
                pass
        self.ws = None
        self.frames.clear()

    def send(self, message: dict) -> None:
        self.ws.send(json.dumps(message))

    def until(self, test, limit: float = 20.0) -> dict:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                frame = json.loads(self.ws.recv(timeout=0.5))
            except TimeoutError:
                continue
            self.frames.append(frame)
            if test(frame):
                return frame
        raise AssertionError(f"{self.path}: no such frame within {limit} s: {self.frames[-5:]}")

    def events(self, kind: str) -> list[dict]:
        return [f["event"] for f in self.frames if f.get("event", {}).get("type") == kind]
