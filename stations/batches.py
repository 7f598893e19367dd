"""Group commit: the station messages that reach one table together are written together.

Each server process keeps one batch per table. A message joins the table's batch; while a
batch is being written (one transaction, on the database thread), the messages that arrive
wait, and the next batch takes all of them at once. A lone message on a quiet table is
written at once, so batching adds no wait. Inside a batch every message is handled as it
would be alone (``stations.commands.handle_batch``: its own reply, idempotent by its
client_id), in receipt order, under one lock of the table's open round taken at the start;
the batch commits once, and only then are the replies returned and, right after them, the
table's events sent (what its commit said, in one message: tablehub/broadcast.py). The
replies go first: a batch that ends a round tells every station its settlement, and its own
messages' answers need not wait behind that (docs/protocol.md lets a reply come before or
after the events its command caused). A decision that closes its step starts the next batch
(``handle_batch``): the batch before it commits and answers first, so that its messages do
not wait for the settlement or the prompts that closing the step writes. If the batch fails
as a whole (the
database, not a refused message), each message is handled again on its own, so that one
failure costs no other message its answer.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from channels.db import database_sync_to_async
from django.db import IntegrityError

from stations.commands import handle_batch
from stations.models import Station
from tablehub import broadcast

log = logging.getLogger("tablehub.stations")

# How the messages waiting are cut into transactions (``cut``): up to SMALL_BATCH are one
# batch; more are cut into equal batches of at most MAX_BATCH, at least two, so that a
# burst's first replies go out while the rest is written. A batch has a cost of its own
# (its reads, inserts and commit; 5 to 15 ms on PostgreSQL while the event loop reads the
# burst), shared by its messages, and a burst's last reply waits for every batch before it:
# the fewest batches that still answer the first half early (docs/benchmarks.md).
SMALL_BATCH = 32
MAX_BATCH = 256


def cut(waiting: int) -> list[int]:
    """The sizes of the batches ``waiting`` messages are written in, in order: one batch of
    up to SMALL_BATCH; else the fewest equal batches of at most MAX_BATCH, at least two
    (199: 100 and 99; 999: 250, 250, 250 and 249)."""
    if waiting <= SMALL_BATCH:
        return [waiting]
    parts = max(2, -(-waiting // MAX_BATCH))
    size, larger = divmod(waiting, parts)
    return [size + 1] * larger + [size] * (parts - larger)


def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


@dataclass
class Message:
    station: Station
    content: dict[str, Any]
    received_at: datetime
    reply: asyncio.Future = field(default_factory=lambda: _loop().create_future())


def write(batch: list[Message]) -> list[dict[str, Any] | BaseException]:
    """Handle a batch in one transaction (two or more when a decision closes its step); each
    message's reply (or the exception it raised, when it had to be handled alone). What the
    commits said is sent before it returns."""
    results: list[dict[str, Any] | BaseException] = []
    with broadcast.one_send_per_commit():
        while len(results) < len(batch):
            results += _write(batch[len(results) :])
    return results


def write_keeping_news(
    batch: list[Message],
) -> tuple[list[dict[str, Any] | BaseException], broadcast.Said]:
    """``write``'s first transaction: the replies of the batch's first messages, all of them
    unless a decision closed its step, and what the commit said beside them, for the loop to
    send once it has answered (``broadcast.send_said``)."""
    with broadcast.said_together() as said:
        return _write(batch), said


def _write(batch: list[Message]) -> list[dict[str, Any] | BaseException]:
    """The replies of the batch's first messages, at least one (``handle_batch``)."""
    try:
        return list(handle_batch([(m.station, m.content, m.received_at) for m in batch]))
    except Exception:
        if len(batch) > 1:
            log.warning("a batch of %d messages failed: each is handled alone", len(batch))
    results: list[dict[str, Any] | BaseException] = []
    for message in batch:
        try:
            results.append(_alone(message))
        except Exception as exc:  # this message's own failure: its consumer answers it
            results.append(exc)
    return results


def _alone(message: Message) -> dict[str, Any]:
    one = [(message.station, message.content, message.received_at)]
    try:
        return handle_batch(one)[0]
    except IntegrityError:
        # Another process stored a reply to the same client_id meanwhile (two sockets of
        # one station): answered again, this time from that stored reply.
        return handle_batch(one)[0]


class TableBatch:
    """The messages of one table waiting to be written, in receipt order."""

    def __init__(self) -> None:
        self.waiting: list[Message] = []
        self.writing: asyncio.Task | None = None
        self.sizes: list[int] = []  # the last batches' sizes (for the benchmarks)
        # The sizes of the batches still to be written of the messages that were waiting
        # when the last cut was made (``cut``); messages that came since wait for them.
        self.planned: list[int] = []

    async def submit(self, message: Message) -> dict[str, Any]:
        self.waiting.append(message)
        if self.writing is None or self.writing.done():
            self.writing = asyncio.ensure_future(self._write_all())
        return await message.reply

    async def _write_all(self) -> None:
        while self.waiting:
            # Receipt order: a message may join later than one stamped after it (its
            # receipt's registration in Redis is awaited first).
            self.waiting.sort(key=lambda message: message.received_at)
            if not self.planned:
                self.planned = cut(len(self.waiting))
            size = self.planned.pop(0)
            batch, self.waiting = self.waiting[:size], self.waiting[size:]
            said: broadcast.Said = {}
            try:
                results, said = await database_sync_to_async(write_keeping_news)(batch)
            except asyncio.CancelledError:  # the loop is closing, and its sockets with it
                for message in batch + self.waiting:
                    message.reply.cancel()
                raise
            except Exception as exc:  # the database thread itself failed
                results = [exc] * len(batch)
            # A decision that closed its step and the messages after it: the next batch.
            put_back = batch[len(results) :]
            batch, self.waiting = batch[: len(results)], put_back + self.waiting
            if put_back:
                self.planned.insert(0, len(put_back))
            self.sizes = (self.sizes + [len(batch)])[-100:]
            for message, result in zip(batch, results, strict=True):
                if message.reply.done():
                    continue
                if isinstance(result, BaseException):
                    message.reply.set_exception(result)
                else:
                    message.reply.set_result(result)
            # The replies' consumers run before the table's hubs hear the events.
            await broadcast.send_said(said)


# A batch belongs to the event loop its messages came in on (the server's; tests make more).
_BATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, TableBatch]] = (
    weakref.WeakKeyDictionary()
)


def table_batch(table_id: int) -> TableBatch:
    """This loop's batch of the table."""
    batches = _BATCHES.setdefault(asyncio.get_running_loop(), {})
    batch = batches.get(table_id)
    if batch is None:
        batch = batches[table_id] = TableBatch()
    return batch


async def submit(station: Station, content: dict[str, Any], received_at: datetime) -> dict:
    """Write one station message with whatever else reached its table meanwhile; its reply,
    once the batch that holds it is committed."""
    return await table_batch(station.table_id).submit(Message(station, content, received_at))
