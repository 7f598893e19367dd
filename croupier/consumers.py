"""The card reader's websocket (the reader key, then one card per message) and the croupier
tablet's socket (a logged-in dealer or supervisor; docs/croupier.md)."""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from croupier.services import scan
from croupier.tablet import croupier_state, error_reply, handle
from rounds.engine import EngineError
from tablehub.broadcast import croupier_group, remember_server_loop, table_group, tell_croupier
from tablehub.consumers import TableConsumer
from tablehub.models import Table
from tablehub.roles import TABLET_ROLES, has_role

log = logging.getLogger("tablehub.croupier")


@database_sync_to_async
def _reader_table(table_id: int, key: object) -> Table | None:
    table = Table.objects.filter(pk=table_id).first()
    if table is None or not isinstance(key, str) or not table.check_reader_key(key):
        return None
    return table


def scan_reply(table: Table, content: dict[str, Any]) -> dict[str, Any]:
    """Scan one card; an error also goes to the croupier tablet."""
    try:
        result = scan(table, content.get("seq"), content.get("card"), bool(content.get("burn")))
        return {"type": "scan", "ok": True, **result}
    except EngineError as exc:
        log.warning("table %s reader: %s", table.pk, exc.line())
        tell_croupier(table.pk, {"type": "reader_error", "code": exc.code, "message": exc.line()})
        return {
            "type": "scan",
            "ok": False,
            "seq": content.get("seq"),
            "error": {"code": exc.code, "message": exc.line()},
        }


class ShoeConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        remember_server_loop()
        self.table: Table | None = None
        await self.accept()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            content = json.loads(text_data or "")
        except ValueError:
            await self.send_json(
                {
                    "type": "scan",
                    "ok": False,
                    "error": {"code": "bad_json", "message": "not valid JSON"},
                }
            )
            return
        if not isinstance(content, dict):
            await self.send_json(
                {
                    "type": "scan",
                    "ok": False,
                    "error": {"code": "bad_message", "message": "send an object"},
                }
            )
            return
        if self.table is None:
            self.table = await _reader_table(self.table_id, content.get("key"))
            ok = self.table is not None
            await self.send_json(
                {"type": "hello", "ok": ok}
                if ok
                else {
                    "type": "hello",
                    "ok": False,
                    "error": {"code": "unauthorized", "message": "unknown table or reader key"},
                }
            )
            return
        await self.send_json(await database_sync_to_async(scan_reply)(self.table, content))


MAX_FRAME = 4096
KEEP_REPLIES = 256
CLOSE_LOGGED_OUT = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NO_TABLE = 4404


@database_sync_to_async
def _admit(table_id: int, user: Any) -> tuple[Table | None, int | None]:
    """The table, or the close code that refuses this user."""
    if user is None or not user.is_authenticated:
        return None, CLOSE_LOGGED_OUT
    if not has_role(user, TABLET_ROLES):
        return None, CLOSE_FORBIDDEN
    table = Table.objects.filter(pk=table_id).first()
    return table, None if table is not None else CLOSE_NO_TABLE


class CroupierConsumer(TableConsumer):
    """The croupier tablet's socket (docs/croupier.md): a logged-in user with a tablet role;
    table events (``table.{id}``) and croupier messages (``croupier.{id}``, e.g. reader
    errors) forwarded as they come, one reply per command."""

    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        remember_server_loop()
        self.user = self.scope.get("user")
        self.table: Table | None = None
        self.replies: dict[str, dict[str, Any]] = {}
        table, refusal = await _admit(self.table_id, self.user)
        await self.accept()
        if refusal is not None:
            name = getattr(self.user, "username", "") or "anonymous"
            log.warning("table %s: tablet socket refused for %s (%s)", self.table_id, name, refusal)
            await self.close(code=refusal)
            return
        self.table = table
        await self.channel_layer.group_add(table_group(self.table_id), self.channel_name)
        await self.channel_layer.group_add(croupier_group(self.table_id), self.channel_name)
        state = await database_sync_to_async(croupier_state)(table)
        await self.send_json({"type": "state", "state": state})

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.table is None:
            return
        if text_data is None or len(text_data) > MAX_FRAME:
            log.warning("table %s tablet: a frame that is not a short text", self.table_id)
            await self.send_json(
                error_reply(None, "bad_message", "send one JSON object per text frame")
            )
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            log.warning("table %s tablet: malformed JSON", self.table_id)
            await self.send_json(error_reply(None, "bad_json", "the message is not valid JSON"))
            return
        client_id = content.get("client_id") if isinstance(content, dict) else None
        if isinstance(client_id, str) and client_id in self.replies:
            await self.send_json(self.replies[client_id] | {"resent": True})
            return
        reply = await database_sync_to_async(handle)(self.table, self.user, content, self.scope)
        if isinstance(client_id, str) and reply["client_id"] == client_id:
            if len(self.replies) >= KEEP_REPLIES:
                self.replies.pop(next(iter(self.replies)))
            self.replies[client_id] = reply
        await self.send_json(reply)

    async def disconnect(self, code: int) -> None:
        if self.table is not None:
            await self.channel_layer.group_discard(table_group(self.table_id), self.channel_name)
            await self.channel_layer.group_discard(croupier_group(self.table_id), self.channel_name)
