"""The base of every table websocket consumer: the door (frame checks, the rate limit) and
table events forwarded as they come.

Every frame a client sends passes the same door before its consumer sees it
(docs/reliability.md):
* the per-connection rate limit (tablehub/ratelimit.py): over it the frame is refused with
  ``rate_limited``; a flood closes the connection with 4429;
* one JSON text frame of at most 4 KiB (``bad_message``), valid JSON without ``NaN`` or
  ``Infinity`` and not nested deeper than ``MAX_DEPTH`` (``bad_json``), whose strings hold
  no NUL and no lone surrogate (``bad_message``: neither can be stored in the database);
* a consumer's handler that fails unexpectedly answers ``server_error`` (logged) and the
  connection stays open.

Costs of channels' defaults matter when one card goes to hundreds of stations:
* ``AsyncConsumer.dispatch`` hops to the database thread to close stale connections before
  every message, also for a table event that touches no database; here every database call
  goes through ``database_sync_to_async``, which does that cleanup itself, so it is skipped;
* an event is encoded to JSON once, by ``tablehub.broadcast``, and carried once per server
  process: the process's table hub (tablehub/fanout.py) writes the text to each socket, with
  no channel-layer message, queue or dispatch per station;
* a frame is written straight to daphne's connection where it allows it, past channels',
  daphne's and autobahn's layers of sending (tablehub/direct_send.py): replies and events;
* a consumer takes its frames and its channel's messages from one queue, not from a race of
  two tasks per message (tablehub/one_queue.py).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from asgiref.typing import WebSocketConnectEvent, WebSocketDisconnectEvent, WebSocketReceiveEvent
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils import timezone

from rounds import receipts
from tablehub import direct_send, fanout, frame_stamps, one_queue, ratelimit
from tablehub.session_guard import SessionGuard

log = logging.getLogger("tablehub.door")

MAX_FRAME = 4096  # bytes of one frame (UTF-8)
MAX_DEPTH = 8  # arrays and objects inside each other; no message needs more than 3
MAX_CLIENT_ID = 64


class Refused(Exception):
    """A frame refused at the door: an error code and one line for the client."""

    def __init__(self, code: str, message: str, content: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.content = content  # the decoded message, when it could be decoded


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# One decoder for every frame: ``json.loads`` with an option makes a new one per call.
_decode = json.JSONDecoder(parse_constant=_no_constant).decode


def decode_frame(text_data: str | None, bytes_data: bytes | None = None) -> Any:
    """The JSON value of one frame, or ``Refused``."""
    if text_data is None:
        raise Refused("bad_message", "send one JSON object per text frame")
    if len(text_data) > MAX_FRAME or len(text_data.encode("utf-8", "surrogatepass")) > MAX_FRAME:
        raise Refused("bad_message", f"a frame holds at most {MAX_FRAME} bytes")
    try:
        content = _decode(text_data)
    except (ValueError, RecursionError):
        raise Refused("bad_json", "the message is not valid JSON") from None
    try:
        check_value(content)
    except Refused as exc:
        exc.content = content
        raise
    return content


def check_value(content: Any) -> None:
    """No deeper than MAX_DEPTH; no NUL or lone surrogate in any string (keys included)."""
    pending: list[tuple[Any, int]] = [(content, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            check_text(value)
        elif isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise Refused("bad_json", f"the message is nested deeper than {MAX_DEPTH}")
            if isinstance(value, dict):
                for key, item in value.items():
                    check_text(key)
                    pending.append((item, depth + 1))
            else:
                pending.extend((item, depth + 1) for item in value)


def check_text(text: str) -> None:
    if "\x00" in text:
        raise Refused("bad_message", "a string holds a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused("bad_message", "a string holds a lone surrogate") from None


def client_id_of(content: Any) -> str | None:
    """The message's ``client_id`` when it is a valid one (to echo in a refusal), else None."""
    client_id = content.get("client_id") if isinstance(content, dict) else None
    if isinstance(client_id, str) and 1 <= len(client_id) <= MAX_CLIENT_ID:
        return client_id
    return None


class TableConsumer(AsyncJsonWebsocketConsumer, SessionGuard):
    """Subclasses set ``rate_kind``, answer a refusal in their protocol's shape
    (``refusal``) and handle the decoded message (``receive_message``). Their session is
    kept valid by ``SessionGuard`` (tablehub/session_guard.py)."""

    rate_kind = "station"
    # Daphne's connection, written to straight (tablehub/direct_send.py); None: another server
    writer: direct_send.FrameWriter | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # The socket's frames and the channel's messages from one queue (tablehub/one_queue.py).
        await one_queue.serve(self, scope, receive, send)

    async def websocket_connect(self, message: WebSocketConnectEvent) -> None:
        self.limiter = ratelimit.for_connection(self.rate_kind)
        self.closing = False
        writer = self.scope.get(direct_send.WRITER)
        if isinstance(writer, direct_send.FrameWriter):
            self.writer = writer
        await super().websocket_connect(message)

    async def websocket_disconnect(self, message: WebSocketDisconnectEvent) -> None:
        await self.leave_session_group()
        await super().websocket_disconnect(message)

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def send(  # type: ignore[override]  # channels' websocket send, as its own is
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None:
        if text_data is not None and not close and self.writer is not None:
            if self.writer.write(direct_send.Outgoing(text_data)):
                return
        await super().send(text_data, bytes_data, close)

    async def send_json(self, content: Any, close: bool = False) -> None:
        # channels' own calls the parent's ``send``, past this class's
        await self.send(text_data=await self.encode_json(content), close=close)

    def deliver_now(self, outgoing: direct_send.Outgoing) -> bool:
        """An event for this table, this station or the croupier, already framed, from the
        process's table hub (tablehub/fanout.py), written at once if the connection allows
        it: True when done with it (written, or dropped for a socket closed for flooding)."""
        return self.closing or (self.writer is not None and self.writer.write(outgoing))

    async def deliver(self, text: str) -> None:
        """The same event sent the usual way, when ``deliver_now`` could not write it."""
        if not self.closing:
            await super().send(text_data=text)

    async def hear_table(self, table_id: int, station: str | None = None) -> None:
        """From now on this socket gets the table's events: a station's own ones with
        ``station``, the croupier's without."""
        self.hub = await fanout.join(self, table_id, self.channel_layer, station)

    def stop_hearing(self) -> None:
        hub = getattr(self, "hub", None)
        if hub is not None:
            hub.remove(self)

    async def websocket_receive(self, message: WebSocketReceiveEvent) -> None:
        # Receipt time decides (rounds/receipts.py): the frame was stamped as the server read
        # it, before its connection's queue (tablehub/frame_stamps.py), and registered with
        # its table while it waited there; handled, it is let go.
        extra: dict[str, Any] = dict(message)  # with the stamp's keys, beside the ASGI ones
        stamp, queued = extra.get(frame_stamps.STAMP), extra.get(frame_stamps.QUEUED)
        self.received_at = (
            datetime.fromtimestamp(stamp, tz=UTC) if stamp is not None else timezone.now()
        )
        try:
            await super().websocket_receive(message)
        finally:
            if queued is not None:
                receipts.dequeued(int(self.scope["url_route"]["kwargs"]["table_id"]), queued)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if self.closing:
            return  # closed for flooding: frames still on their way are dropped
        verdict = self.limiter.check()
        if verdict is ratelimit.Verdict.CLOSE:
            self.closing = True
            log.warning(
                "%s: closed for flooding (%d frames refused)", self.who(), self.limiter.refused
            )
            await self.close(code=ratelimit.CLOSE_FLOODING)
            return
        try:
            content = decode_frame(text_data, bytes_data)
        except Refused as exc:
            log.info("%s: %s (%s)", self.who(), exc.code, exc.message)
            await self.send_json(self.refusal(exc.code, exc.message, exc.content))
            return
        if verdict is ratelimit.Verdict.REFUSE:
            if self.limiter.refused == 1 or self.limiter.refused % 100 == 0:
                log.info("%s: rate limited (%d frames so far)", self.who(), self.limiter.refused)
            await self.send_json(
                self.refusal("rate_limited", "too many messages: this one was not handled", content)
            )
            return
        try:
            await self.receive_message(content)
        except Exception:  # one reply still; the connection stays open
            log.exception("%s: a message failed", self.who())
            await self.send_json(
                self.refusal("server_error", "the server failed on this message (logged)", content)
            )

    def who(self) -> str:
        kwargs = self.scope.get("url_route", {}).get("kwargs", {})
        return f"table {kwargs.get('table_id')} {self.rate_kind}"

    def refusal(self, code: str, message: str, content: Any) -> dict[str, Any]:
        return {
            "type": "reply",
            "client_id": client_id_of(content),
            "ok": False,
            "error": {"code": code, "message": message},
        }

    async def receive_message(self, content: Any) -> None:
        """Handle one decoded message; ``self.received_at`` is when its frame arrived."""
        raise NotImplementedError
