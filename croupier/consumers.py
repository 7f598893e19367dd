"""The card reader's websocket: authenticate with the reader key, then one card per message."""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from croupier.services import scan
from rounds.engine import EngineError
from tablehub.broadcast import remember_server_loop, tell_croupier
from tablehub.models import Table

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


class CroupierConsumer(AsyncJsonWebsocketConsumer):
    """The croupier tablet's socket (docs/croupier.md). Placeholder until the tablet lands."""

    async def connect(self) -> None:
        await self.close()
