"""The station websocket (docs/protocol.md): join with the device credential, then one reply
per client message; table and private events arrive as they happen. Every frame first passes
the door of ``tablehub.consumers.TableConsumer`` (frame checks, the rate limit)."""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

from channels.db import database_sync_to_async
from django.utils import timezone

from rounds import receipts
from rounds.recovery import server_connected
from stations import batches
from stations.commands import SESSION_ENDED, reply_text, station_state
from stations.models import Station
from tablehub import attempts, metrics
from tablehub.consumers import TableConsumer, client_id_of
from tablehub.session_guard import (
    CLOSE_MOVED,
    CLOSE_UNAUTHORIZED,
    station_checks,
    station_group,
)

log = logging.getLogger("tablehub.stations")


def error(code: str, message: str, client_id: Any = None) -> dict[str, Any]:
    return {
        "type": "reply",
        "client_id": client_id,
        "ok": False,
        "error": {"code": code, "message": message},
    }


@database_sync_to_async
def _join(table_id: int, name: object, credential: object, address: str) -> Station | Refusal:
    """The station, or the refusal: failed joins are limited per station and per address
    (tablehub/attempts.py)."""
    station_key = f"{table_id}:{name}" if isinstance(name, str) else None
    too_many = attempts.too_many("station", station_key, address)
    if too_many is not None:
        return Refusal(attempts.CODE, too_many)
    station = None
    if isinstance(name, str) and isinstance(credential, str):
        station = Station.objects.filter(table_id=table_id, name=name, is_active=True).first()
        if station is not None and not station.check_credential(credential):
            station = None
    if station is None:
        attempts.failed("station", station_key, address)
        return Refusal("unauthorized", "unknown station or credential")
    return station


@database_sync_to_async
def _plays_at(station_id: int, table_id: int) -> bool:
    return Station.objects.filter(pk=station_id, table_id=table_id).exists()


class Refusal(NamedTuple):
    code: str
    message: str


class StationConsumer(TableConsumer):
    rate_kind = "station"

    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        server_connected()
        self.station: Station | None = None
        await self.accept()

    def who(self) -> str:
        return f"table {self.table_id} station {self.station.name if self.station else '-'}"

    async def receive_message(self, content: Any) -> None:
        if not isinstance(content, dict):
            await self.send_json(error("bad_message", "a message must be a JSON object"))
            return
        client_id = client_id_of(content)
        if not isinstance(content.get("type"), str):
            message = 'type must be a string such as "place"'
            await self.send_json(error("bad_message", message, client_id))
            return
        if content["type"] == "ping":  # the server's clock, for a countdown and the latency
            now = timezone.now().isoformat()
            await self.send_json(
                {"type": "reply", "client_id": client_id, "ok": True, "server_time": now}
            )
            return
        if self.station is None:
            if content.get("type") != "join":
                await self.send_json(error("not_joined", "join the table first", client_id))
                return
            station = await _join(
                self.table_id,
                content.get("station"),
                content.get("credential"),
                attempts.address_of(self.scope),
            )
            if isinstance(station, Refusal):
                log.warning("table %s: refused join as %r", self.table_id, content.get("station"))
                await self.send_json(error(station.code, station.message, client_id))
                return
            # Joined only once it hears the table: if the channel layer fails here (Redis
            # restarting), the socket stays unjoined and a second ``join`` works.
            await self.guard_session(station_group(station.pk))
            await self.hear_table(self.table_id, station.name)
            self.station = station
            state = await database_sync_to_async(station_state)(station)
            await self.send_json(
                {"type": "reply", "client_id": client_id, "ok": True, "state": state}
            )
            return
        with receipts.holding(self.table_id, self.received_at):
            reply = await batches.submit(self.station, content, self.received_at)
        if not reply["ok"]:
            log.info("station %s: %s", self.station, reply["error"])
        text = reply_text(reply)  # encoded already for its stored row
        await (self.send(text_data=text) if text is not None else self.send_json(reply))
        if not reply["ok"] and reply["error"]["code"] == SESSION_ENDED:
            await self.end_session(CLOSE_UNAUTHORIZED, reply["error"]["message"])
            return
        if reply["ok"] and "moved" in reply and not reply.get("resent"):
            # The station plays at another table now: it joins that table's socket.
            await self.end_session(CLOSE_MOVED, f"moved to table {reply['moved']['table_id']}")
            return
        waited = (timezone.now() - self.received_at).total_seconds()
        metrics.observe_station_message(content["type"], waited)

    async def session_refusal(self, ended: str | None = None) -> tuple[int, str] | None:
        station = self.station
        if station is None:
            return None
        if not await station_checks().holds(station.pk, station.credential):
            return CLOSE_UNAUTHORIZED, "the station was deactivated or its credential changed"
        # Asked again when the station was changed (tablehub/session_guard.py): one that
        # moved to another table of its stadium plays there, not on this table's socket.
        if not await _plays_at(station.pk, self.table_id):
            return CLOSE_MOVED, "the station moved to another table of its stadium"
        return None

    async def disconnect(self, code: int) -> None:
        self.stop_hearing()
