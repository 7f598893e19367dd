"""The card reader's websocket (the reader key, then one card per message) and the croupier
tablet's socket (a logged-in dealer or supervisor; docs/croupier.md). Every frame first
passes the door of ``tablehub.consumers.TableConsumer`` (frame checks, the rate limit)."""

from __future__ import annotations

import logging
from typing import Any, cast

from channels.db import database_sync_to_async

from croupier import dealers
from croupier.conservation import CardCountExceeded, raise_alert
from croupier.services import scan
from croupier.tablet import error_reply, handle
from croupier.tablet_state import croupier_state
from rounds.engine import EngineError
from rounds.recovery import server_connected
from tablehub import attempts
from tablehub.broadcast import tell_croupier
from tablehub.consumers import TableConsumer, client_id_of
from tablehub.models import Table
from tablehub.roles import TABLET_ROLES, has_role, works_table
from tablehub.session_guard import (
    CLOSE_UNAUTHORIZED,
    reader_group,
    reader_refusal,
    session_hash,
    tablet_refusal,
    user_group,
)

log = logging.getLogger("tablehub.croupier")


def reader_table(table_id: int, key: object, address: str) -> Table | tuple[str, str]:
    """The table whose reader key this is, or a refusal (code, message): failed keys are
    limited per table and per address (tablehub/attempts.py), over the websocket and HTTP."""
    too_many = attempts.too_many("reader", str(table_id), address)
    if too_many is not None:
        return attempts.CODE, too_many
    table = Table.objects.filter(pk=table_id).first()
    if table is None or not isinstance(key, str) or not table.check_reader_key(key):
        attempts.failed("reader", str(table_id), address)
        return "unauthorized", "unknown table or reader key"
    return table


def scan_error(seq: Any, code: str, message: str) -> dict[str, Any]:
    return {"type": "scan", "ok": False, "seq": seq, "error": {"code": code, "message": message}}


def scan_reply(table: Table, content: dict[str, Any]) -> dict[str, Any]:
    """Scan one card (a ``card`` message, or the HTTP body: ``type`` may be left out there);
    an error also goes to the croupier tablet."""
    seq = content.get("seq")
    try:
        if content.get("type", "card") != "card":
            raise EngineError(f"unknown message type {content.get('type')!r}", code="bad_message")
        burn = content.get("burn", False)
        if not isinstance(burn, bool):
            raise EngineError(f"burn must be true or false, got {burn!r}", code="bad_message")
        result = scan(table, seq, content.get("card"), burn)
        return {"type": "scan", "ok": True, **result}
    except EngineError as exc:
        log.warning("table %s reader: %s", table.pk, exc.line())
        tell_croupier(table.pk, {"type": "reader_error", "code": exc.code, "message": exc.line()})
        if isinstance(exc, CardCountExceeded):  # the dealer checks the card, a supervisor too
            raise_alert(exc)
        return scan_error(seq if _plain_seq(seq) else None, exc.code, exc.line())


def _plain_seq(seq: Any) -> bool:
    """A sequence number that may be echoed: a whole number (not a nested value)."""
    return isinstance(seq, int) and not isinstance(seq, bool)


class ShoeConsumer(TableConsumer):
    """The card reader's socket: ``hello`` with the reader key, then one card per message."""

    rate_kind = "shoe"

    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        server_connected()
        self.table: Table | None = None
        await self.accept()

    def refusal(self, code: str, message: str, content: Any) -> dict[str, Any]:
        seq = content.get("seq") if isinstance(content, dict) else None
        if self.table is None:
            return {"type": "hello", "ok": False, "error": {"code": code, "message": message}}
        return scan_error(seq if _plain_seq(seq) else None, code, message)

    async def receive_message(self, content: Any) -> None:
        if not isinstance(content, dict):
            await self.send_json(self.refusal("bad_message", "send an object", content))
            return
        if self.table is None:
            table = await database_sync_to_async(reader_table)(
                self.table_id, content.get("key"), attempts.address_of(self.scope)
            )
            if not isinstance(table, Table):
                log.warning("table %s: reader refused (%s)", self.table_id, table[0])
                await self.send_json(self.refusal(*table, content))
                return
            self.table = table
            await self.guard_session(reader_group(self.table.pk))
            await self.send_json({"type": "hello", "ok": True})
            return
        table = self.table
        # The reader key is checked again with each card (tablehub/session_guard.py).
        reply = await self.within_session(content, lambda: scan_reply(table, content))
        if reply is not None:
            await self.send_json(reply)

    def check_session(self) -> tuple[int, str] | None:
        if self.table is None:
            return None
        return reader_refusal(self.table.pk, self.table.reader_key)


KEEP_REPLIES = 256
CLOSE_LOGGED_OUT = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NO_TABLE = 4404


@database_sync_to_async
def _admit(table_id: int, user: Any) -> Table | int:
    """The table, or the close code that refuses this user."""
    if user is None or not user.is_authenticated:
        return CLOSE_LOGGED_OUT
    if not has_role(user, TABLET_ROLES):
        return CLOSE_FORBIDDEN
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        return CLOSE_NO_TABLE
    # Dealers and supervisors work only their tables (Table.staff), as in the API.
    return table if works_table(user, table) else CLOSE_FORBIDDEN


class CroupierConsumer(TableConsumer):
    """The croupier tablet's socket (docs/croupier.md): a logged-in user with a tablet role;
    the table's events and the messages for the croupier (e.g. reader errors) forwarded as
    they come (tablehub/fanout.py), one reply per command."""

    rate_kind = "tablet"

    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        server_connected()
        self.user = self.scope.get("user")
        self.table: Table | None = None
        self.replies: dict[str, dict[str, Any]] = {}
        table = await _admit(self.table_id, self.user)
        await self.accept()
        if isinstance(table, int):
            name = getattr(self.user, "username", "") or "anonymous"
            log.warning("table %s: tablet socket refused for %s (%s)", self.table_id, name, table)
            await self.close(code=table)
            return
        assert self.user is not None  # admitted: a logged-in user
        await self.guard_session(user_group(self.user.pk))
        self.table = table
        await database_sync_to_async(dealers.on_tablet_opened)(table.pk, self.user)
        await self.hear_table(self.table_id)
        state = await database_sync_to_async(croupier_state)(table)
        await self.send_json({"type": "state", "state": state})

    def refusal(self, code: str, message: str, content: Any) -> dict[str, Any]:
        return error_reply(client_id_of(content), code, message)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if self.table is None:
            return  # refused at connect: the socket is closing
        await super().receive(text_data, bytes_data, **kwargs)

    async def receive_message(self, content: Any) -> None:
        client_id = client_id_of(content)
        if client_id is not None and client_id in self.replies:
            await self.send_json(self.replies[client_id] | {"resent": True})
            return
        table, user = self.table, self.user
        assert table is not None and user is not None  # receive drops a refused socket's frames
        # The scope is a dict at run time; channels' stubs type it as a TypedDict.
        scope = cast(dict[str, Any], self.scope)
        # The session is checked again with each command (tablehub/session_guard.py); a
        # reply resent from memory above was already this socket's.
        reply = await self.within_session(content, lambda: handle(table, user, content, scope))
        if reply is None:
            return
        if client_id is not None and reply["client_id"] == client_id:
            if len(self.replies) >= KEEP_REPLIES:
                self.replies.pop(next(iter(self.replies)))
            self.replies[client_id] = reply
        await self.send_json(reply)

    def session_key(self) -> str | None:
        return getattr(self.scope.get("session"), "session_key", None)

    async def session_refusal(self, ended: str | None = None) -> tuple[int, str] | None:
        if ended is not None and ended == session_hash(self.session_key()):
            return CLOSE_UNAUTHORIZED, "logged out: log in again"
        return await super().session_refusal(ended)

    def check_session(self) -> tuple[int, str] | None:
        user_id = getattr(self.user, "pk", None)
        if self.table is None or user_id is None:
            return None
        return tablet_refusal(self.session_key(), user_id, self.table_id)

    async def disconnect(self, code: int) -> None:
        self.stop_hearing()
