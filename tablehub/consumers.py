"""The base of every table websocket consumer: table events are forwarded as they come.

Two costs of channels' defaults matter when one card goes to hundreds of stations:
* ``AsyncConsumer.dispatch`` hops to the database thread to close stale connections before
  every message, also for a table event that touches no database; here every database call
  goes through ``database_sync_to_async``, which does that cleanup itself, so it is skipped;
* an event is encoded to JSON once, by ``tablehub.broadcast``, and each consumer forwards
  the text as it is (no per-station encoding, no deep copy of a nested message).
"""

from __future__ import annotations

from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer


class TableConsumer(AsyncJsonWebsocketConsumer):
    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def table_event(self, message: dict[str, Any]) -> None:
        """An event for this table, this station or the croupier, already encoded."""
        await self.send(text_data=message["text"])
