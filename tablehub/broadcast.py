"""Sending the engine's notices to the stations, after the transaction that caused them.

Everything one commit says about a table (public notices, each station's private ones) goes
as one channel-layer message to the table's group, whose members are the server processes'
table hubs (tablehub/fanout.py); each event carries an id ``round.seq.n`` (the round, the
RoundEvent that caused it, its place), so a client can tell what it missed and ask for the
full state.

Every send goes through the event loop the consumers receive on (remembered when one
connects): the in-memory channel layer's queues belong to that loop, and a timer, a
management command or a replay may publish from another thread or loop. The database thread
waits until the loop has handed the message on (measured: letting it go on at once wins a
little on many decisions at once but loses on the fan-out, which the two then share the
interpreter for). A batch of station messages (stations/batches.py) says what its commit
caused in one send per table (``said_together``), not one per message, from the loop, once
its replies are out. A send that fails is logged, not raised: the commit stands, its events
are in the round's event log, and the stations, whose sockets a failing layer closes
(tablehub/fanout.py), get the whole state when they join again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone

from rounds.engine import Notice
from tablehub import jsontext
from tablehub.fanout import (
    CROUPIER,
    PUBLIC,
    STATION,
    frames_message,
    round_ready_message,
    table_group,
)

log = logging.getLogger("tablehub.broadcast")

_SERVER_LOOP: asyncio.AbstractEventLoop | None = None
Frame = tuple[str, str | None, str]  # (audience, station name or None, text)


class _Outbox(threading.local):
    """Inside ``said_together``: the frames this thread's commits have said, by table."""

    frames: dict[int, list[Frame]] | None = None
    # What the croupier was told, by table: said once per send (``tell_croupier``).
    told: set[tuple[int, str]] | None = None


_OUTBOX = _Outbox()


Said = dict[int, list[Frame]]  # what commits said, by table, in the order it was said


@contextmanager
def said_together() -> Iterator[Said]:
    """What the transactions inside commit, collected by table in the order it was said and
    sent by the caller (``send_said``): a batch of station messages answers its messages
    first, then tells the table (a rolled-back transaction or savepoint says nothing: its
    on-commit callbacks never run)."""
    assert _OUTBOX.frames is None, "said_together inside itself"
    said: Said = {}
    _OUTBOX.frames, _OUTBOX.told = said, set()
    try:
        yield said
    finally:
        _OUTBOX.frames = _OUTBOX.told = None


@contextmanager
def one_send_per_commit() -> Iterator[None]:
    """What the transactions inside commit is sent at the end, one message per table."""
    with said_together() as said:
        try:
            yield
        finally:
            for table_id, frames in said.items():
                _send(table_group(table_id), frames_message(frames))


async def send_said(said: Said) -> None:
    """Send what ``said_together`` collected, one message per table, from the server's event
    loop (``_group_send``)."""
    for table_id, frames in said.items():
        await _group_send(table_group(table_id), frames_message(frames))


def _say(table_id: int, frames: list[Frame]) -> None:
    if _OUTBOX.frames is not None:
        _OUTBOX.frames.setdefault(table_id, []).extend(frames)
    else:
        _send(table_group(table_id), frames_message(frames))


def remember_server_loop() -> bool:
    """Called (through rounds.recovery.server_connected) by each consumer as it connects, on
    the loop it receives on; True the first time in a process."""
    global _SERVER_LOOP
    loop = asyncio.get_running_loop()
    if loop is _SERVER_LOOP:
        return False
    _SERVER_LOOP = loop
    return True


def publish_on_commit(table_id: int, round_id: int, seq: int, notices: list[Notice]) -> None:
    if notices:
        transaction.on_commit(lambda: publish(table_id, round_id, seq, notices))


def publish_news_on_commit(table_id: int, round_id: int, seq: int, notices: list[Notice]) -> None:
    """Tell the table ``notices`` that no logged input caused (a restarted betting window,
    the table closed or opened, a new shoe) once this transaction commits. Their ids are
    ``round.seq.n`` with the round's newest ``seq`` and, for ``n``, the server's clock in
    milliseconds: they sort after that input's own events and never look like a gap
    (docs/protocol.md, "Events")."""
    if notices:
        first = int(time.time() * 1000)
        transaction.on_commit(lambda: publish(table_id, round_id, seq, notices, first))


def publish(table_id: int, round_id: int, seq: int, notices: list[Notice], first: int = 0) -> None:
    frames: list[Frame] = []
    for n, notice in enumerate(notices, start=first):
        event: dict[str, Any] = {"type": "event", "id": f"{round_id}.{seq}.{n}", "round": round_id}
        event["event"] = notice.message
        if "deadline" in notice.message:  # a countdown needs the server's clock beside it
            event["event"] = {**notice.message, "server_time": timezone.now().isoformat()}
        text = jsontext.encode(event)
        if notice.to == "public":
            frames.append((PUBLIC, None, text))
        else:
            frames.append((STATION, notice.to, text))
    _say(table_id, frames)


def tell_croupier(table_id: int, message: dict[str, Any]) -> None:
    """Tell the table's croupier tablets ``message``. Inside ``said_together`` the same
    message is said once per send: a batch of 256 bets tells the tablet once that bets
    changed (it then reads its state, which holds them all), not 256 times."""
    text = jsontext.encode(message)
    told = _OUTBOX.told
    if told is not None:
        if (table_id, text) in told:
            return
        told.add((table_id, text))
    _say(table_id, [(CROUPIER, None, text)])


def round_ready_on_commit(table_id: int, round_id: int) -> None:
    """Once this transaction commits, tell every server process with sockets at the table
    that the round's bets have closed, so that each gets the round ready before its first
    card (tablehub/fanout.py, ``on_round_ready``)."""
    transaction.on_commit(lambda: _send(table_group(table_id), round_ready_message(round_id)))


def send_to_group(group: str, message: dict[str, Any]) -> None:
    """Send one channel-layer message to a group (from any thread or loop; logged, not
    raised, when it fails)."""
    _send(group, message)


def _send(group: str, message: dict[str, Any]) -> None:
    """``_group_send`` on the server's loop, from a thread or another loop, waited for."""
    loop = _SERVER_LOOP
    try:
        current = asyncio.get_running_loop()
    except RuntimeError:
        current = None
    try:
        if loop is not None and loop.is_running() and loop is not current:
            asyncio.run_coroutine_threadsafe(_group_send(group, message), loop).result(10)
        else:
            async_to_sync(_group_send)(group, message)
    except Exception:  # the loop did not take it in time
        log.exception("events for %s not sent", group)


async def _group_send(group: str, message: dict[str, Any]) -> None:
    """One channel-layer message to a group; logged, not raised, when it fails (the commit
    stands: see the module)."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        await layer.group_send(group, message)
    except Exception:
        log.exception("events for %s not sent", group)
