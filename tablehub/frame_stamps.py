"""Receipt time at the socket: every websocket frame is stamped with the time it arrived.

Receipt time decides (rounds/receipts.py): a station's command is on time when its frame
arrived at or before the step's deadline. Daphne reads a frame and puts it on its
connection's application queue; the consumer takes it off when the event loop gets to that
consumer, which in a burst is after every frame read before it, and after the replies and
events being written meanwhile. A stamp taken by the consumer would count that wait against
the player. So ``StampFrames`` stamps each frame where the server puts it on that queue,
with the time its bytes reached the machine (``STAMP``, epoch seconds: the kernel's receipt
time, tablehub/sockets.py; the server's clock where there is none), and registers a
station's frame at once with its table as received (``receipts.queued``): the step's expiry
waits for it while it waits in the queue.
The consumer reads the stamp (``tablehub.consumers.TableConsumer``), registers the command
for as long as it is handled (``receipts.holding``) and lets the queued registration go.

The queue is the one daphne (and channels' test communicator) gives the application as
``receive``: a bound ``asyncio.Queue.get``. An application started any other way gets no
stamps; its consumers stamp frames themselves when they take them, as before.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from rounds import receipts
from tablehub import sockets

STAMP = "tablehub.received_at"  # when the frame reached the machine, epoch seconds
QUEUED = "tablehub.queued"  # the frame's registration with its table while it is queued
# Only a station's commands are judged by receipt time: a card reader's or a tablet's frame
# is not registered, so its own late input may still apply the step's expiry first.
STATION_PATH = re.compile(r"^/ws/tables/(\d+)/station/")


class StampFrames:
    """ASGI middleware for the websocket routes: stamp each received frame on arrival."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        queue = getattr(receive, "__self__", None)
        if scope.get("type") == "websocket" and isinstance(queue, asyncio.Queue):
            receipts.publishing(asyncio.get_running_loop())  # for other processes' expiries
            match = STATION_PATH.match(scope.get("path", ""))
            _stamp_on_put(queue, int(match.group(1)) if match else None)
        return await self.app(scope, receive, send)


def _stamp_on_put(queue: asyncio.Queue, table_id: int | None) -> None:
    put = queue.put_nowait

    def put_stamped(message: Any) -> None:
        if isinstance(message, dict) and message.get("type") == "websocket.receive":
            stamp = sockets.receipt_time() or time.time()  # when it reached the machine
            message = {**message, STAMP: stamp}
            if table_id is not None:
                message[QUEUED] = receipts.queued(table_id, stamp)
        put(message)

    # asyncio.Queue.put (channels' test communicator) calls put_nowait too.
    queue.put_nowait = put_stamped  # type: ignore[method-assign,assignment]
