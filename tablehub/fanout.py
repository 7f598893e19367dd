"""A table's events, carried once per server process and handed to its sockets there.

``tablehub.broadcast`` sends everything one commit has to say about a table (public events,
each station's private events, messages for the croupier) as one channel-layer message to
the table's group. The group's members are not the sockets but one *table hub* per server
process: the process's only listener for that table. The hub writes each frame, already
encoded, to the local sockets it is for, in the order the commit produced them; what one
commit says to one socket goes in one send.

Why not one group member per socket, channels' usual way: a card for 200 stations was then
200 layer messages (200 Redis pushes in production), 200 queue wake-ups and 200 consumer
dispatches before the first byte was written; now it is one message per server process.
One queue per process per table also keeps a station's private events in their order
against the public ones. The hub writes to one socket after another: daphne's send never
waits for the client (Twisted buffers what the socket cannot take yet), so a slow station
does not hold up the others. Each frame is framed once for all its sockets and written
straight to their connections where they allow it (tablehub/direct_send.py).

A socket joins its table's hub (``join``), which adds the hub to the group again each
time, so a hub whose membership was lost (Redis restarted empty) hears the table again at
the next join; it also renews its membership before the layer's group expiry. When the
layer fails under it, the hub closes its sockets with 1011 ("try again"): a station that
reconnects and joins gets the whole state, rather than sitting on an open socket that no
longer hears its table. The last socket to leave (``TableHub.remove``) closes the hub.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from typing import Any, Protocol

from channels.db import database_sync_to_async
from django.conf import settings

from tablehub import metrics
from tablehub.direct_send import Outgoing

log = logging.getLogger("tablehub.fanout")

PUBLIC, STATION, CROUPIER = "table", "station", "croupier"  # who a frame is for
MESSAGE_TYPE = "table.frames"
RENEW_SECONDS = 3600.0  # well inside channels' default group expiry (a day)
CLOSE_TRY_AGAIN = 1011


class Socket(Protocol):
    """What the hub needs of a consumer."""

    def deliver_now(self, outgoing: Outgoing) -> bool:
        """Write the frames at once if the connection allows it: True when done with them."""
        ...

    async def deliver(self, text: str) -> None: ...

    async def close(self, code: int | None = None) -> None: ...


def table_group(table_id: int) -> str:
    return f"table.{table_id}"


class Frames(tuple):
    """A commit's frames, (audience, station name or None, text) each: texts that nothing
    changes, so the in-memory layer's copy of a message for each group member (a
    ``deepcopy``, about 4 us a frame at a batch of 256 decisions) keeps this one as it is.
    Over Redis it travels as any list of lists."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> Frames:
        return self


def frames_message(frames: list[tuple[str, str | None, str]]) -> dict[str, Any]:
    """The layer message for a commit's frames: (audience, station name or None, text)."""
    return {"type": MESSAGE_TYPE, "frames": Frames(tuple(frame) for frame in frames)}


ROUND_READY_TYPE = "table.round_ready"
# What a server process does, in its database thread, when a round's bets close anywhere
# (``on_round_ready``): the round writer loads the round's engine (rounds/apps.py).
_ROUND_READY: list[Callable[[int], object]] = []


def round_ready_message(round_id: int) -> dict[str, Any]:
    """The layer message that tells every hub of the table that the round's bets closed."""
    return {"type": ROUND_READY_TYPE, "round": round_id}


def on_round_ready(job: Callable[[int], object]) -> None:
    """Run ``job(round_id)`` in the database thread of every server process with sockets at
    a table whose round's bets just closed, wherever they closed. Why: the process that
    closes them (a Celery worker's timer, another process) builds the round's engine; any
    other replays the round's log at its first input of the round, the dealer's first card,
    which waited for it (docs/benchmarks.md, "the first card of a round")."""
    _ROUND_READY.append(job)


class TableHub:
    def __init__(self, table_id: int, layer: Any) -> None:
        self.table_id = table_id
        self.layer = layer
        self.loop = asyncio.get_running_loop()
        self.listeners: set[Socket] = set()  # every socket that hears public events
        self.stations: dict[str, set[Socket]] = {}
        self.station_of: dict[Socket, str] = {}  # a station's socket -> the station's name
        self.croupiers: set[Socket] = set()
        self.channel: str | None = None
        self.closed = False
        self._tasks: list[asyncio.Task] = []
        self._getting_ready: set[asyncio.Task] = set()  # ``on_round_ready`` jobs running
        self._rejoining: asyncio.Future | None = None
        self.started = asyncio.ensure_future(self._start())

    async def rejoin(self) -> None:
        """Add the hub to the table's group again (the membership may have been lost when
        Redis restarted empty). Sockets joining at once share one ``group_add``: hundreds
        of stations joining together must not take a Redis connection each."""
        if self._rejoining is None or self._rejoining.done():
            assert self.channel is not None  # the hub has started
            self._rejoining = asyncio.ensure_future(
                self.layer.group_add(table_group(self.table_id), self.channel)
            )
        await asyncio.shield(self._rejoining)

    async def _start(self) -> None:
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(table_group(self.table_id), self.channel)
        if self.closed:  # closed while it started
            await self._leave_group(self.channel)
            return
        self._tasks = [
            asyncio.ensure_future(self._listen()),
            asyncio.ensure_future(self._renew()),
        ]

    def add(self, socket: Socket, station: str | None) -> None:
        self.listeners.add(socket)
        if station is None:
            self.croupiers.add(socket)
        else:
            self.stations.setdefault(station, set()).add(socket)
            self.station_of[socket] = station

    def remove(self, socket: Socket) -> None:
        if socket not in self.listeners:
            return
        self.listeners.discard(socket)
        self.croupiers.discard(socket)
        name = self.station_of.pop(socket, None)
        if name is not None:
            sockets = self.stations[name]
            sockets.discard(socket)
            if not sockets:
                del self.stations[name]
        if not self.listeners:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if _HUBS.get(self.table_id) is self:
            del _HUBS[self.table_id]
        for task in self._tasks:
            task.cancel()
        if self.channel is not None and self.started.done():
            asyncio.ensure_future(self._leave_group(self.channel))

    async def _leave_group(self, channel: str) -> None:
        try:
            await self.layer.group_discard(table_group(self.table_id), channel)
        except Exception:  # the membership expires by itself
            log.warning("table %s: could not leave the group", self.table_id, exc_info=True)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                await self.layer.group_add(table_group(self.table_id), self.channel)
            except Exception:
                log.warning("table %s: could not renew the group", self.table_id, exc_info=True)

    async def _listen(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception(
                    "table %s: the channel layer failed; closing its sockets", self.table_id
                )
                await self._close_sockets()
                return
            if message.get("type") == MESSAGE_TYPE:
                await self.hand_out(message["frames"])
            elif message.get("type") == ROUND_READY_TYPE and settings.TABLEHUB_ROUND_READY:
                self._get_ready(message["round"])

    def _get_ready(self, round_id: int) -> None:
        """Run the ``on_round_ready`` jobs for the round, beside the hub's listening: the
        frames of the table's next commits do not wait for them."""
        for job in _ROUND_READY:
            task = asyncio.ensure_future(self._ready_job(job, round_id))
            self._getting_ready.add(task)
            task.add_done_callback(self._getting_ready.discard)

    async def _ready_job(self, job: Callable[[int], object], round_id: int) -> None:
        try:
            await database_sync_to_async(job)(round_id)
        except Exception:  # only time is lost: the round's next input does it itself
            log.warning("table %s: round %s not made ready", self.table_id, round_id, exc_info=True)

    async def hand_out(self, frames: list[list[Any]]) -> None:
        started = time.perf_counter()
        sent: list[tuple[Collection[Socket], Outgoing]] = []
        for audience, station, text in frames:
            sockets: Collection[Socket]
            if audience == PUBLIC:
                sockets = self.listeners
            elif audience == STATION:
                sockets = self.stations.get(station, ())
            else:
                sockets = self.croupiers
            if sockets:  # else a station of another process, or no croupier here
                sent.append((sockets, Outgoing(text)))  # framed once for all its sockets
        if len(sent) == 1:  # one frame (a card): nothing to join
            sockets, outgoing = sent[0]
            for socket in list(sockets):
                await self._write(socket, outgoing)
        else:
            # What each socket gets of this commit, in order, goes in one send: a settlement
            # says three things to every station, and a send costs more than its bytes.
            queued: dict[Socket, list[Outgoing]] = {}
            for sockets, outgoing in sent:
                for socket in sockets:
                    queued.setdefault(socket, []).append(outgoing)
            for socket, waiting in queued.items():
                await self._write(socket, Outgoing.together(waiting))
        metrics.FANOUT.observe(time.perf_counter() - started)
        metrics.FANOUT_FRAMES.inc(sum(len(sockets) for sockets, _outgoing in sent))

    async def _write(self, socket: Socket, outgoing: Outgoing) -> None:
        try:
            if not socket.deliver_now(outgoing):
                for text in outgoing.texts:
                    await socket.deliver(text)
        except Exception:  # one broken socket does not keep the frames from the rest
            log.exception("table %s: a frame could not be written", self.table_id)

    async def _close_sockets(self) -> None:
        sockets = list(self.listeners)
        self.listeners.clear()
        self.close()
        for socket in sockets:
            try:
                await socket.close(code=CLOSE_TRY_AGAIN)
            except Exception:
                log.warning("table %s: a socket did not close", self.table_id, exc_info=True)


_HUBS: dict[int, TableHub] = {}


def connected_stations() -> dict[int, int]:
    """Table id -> the station sockets joined at it in this process."""
    return {
        table_id: sum(len(sockets) for sockets in hub.stations.values())
        for table_id, hub in list(_HUBS.items())
    }


metrics.register_connected_stations(connected_stations)


async def join(socket: Socket, table_id: int, layer: Any, station: str | None = None) -> TableHub:
    """Let ``socket`` hear table ``table_id``: its public events and, for a station, that
    station's private events, or for the croupier (``station`` None) the croupier's.
    Returns the hub (``hub.remove(socket)`` when the socket closes) once the process hears
    the table; a failure of the channel layer is raised."""
    loop = asyncio.get_running_loop()
    while True:
        hub = _HUBS.get(table_id)
        if hub is not None and (hub.layer is not layer or hub.loop is not loop):
            hub.close()  # the hub of a loop or layer that is gone (tests make new ones)
            hub = None
        if hub is None:
            hub = _HUBS[table_id] = TableHub(table_id, layer)
            fresh = True
        else:
            fresh = False
        try:
            await asyncio.shield(hub.started)
        except Exception:
            hub.close()
            raise
        if not fresh:  # the membership may have been lost (Redis restarted empty)
            await hub.rejoin()
        if not hub.closed:  # else its last socket left while this one waited: a new hub
            hub.add(socket, station)
            return hub
