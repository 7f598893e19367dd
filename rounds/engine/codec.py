"""Engine events to and from JSON, the form the round's event log stores."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .cards import parse_card
from .errors import EngineError
from .round import BonusAssigned, Burn, CardDrawn, Decision, Event, SeatLeft, Timeout


def dump_event(event: Event) -> tuple[str, dict[str, Any]]:
    if isinstance(event, CardDrawn):
        return "card", {"card": str(event.card)}
    if isinstance(event, Burn):
        return "burn", {"card": str(event.card)}
    if isinstance(event, Decision):
        decision: dict[str, Any] = {
            "station": event.station,
            "action": event.action,
            "hand": event.hand,
        }
        if event.automatic:  # only then: the log of a player's decision is as it always was
            decision["automatic"] = True
        return "decision", decision
    if isinstance(event, Timeout):
        return "timeout", {"station": event.station}
    if isinstance(event, BonusAssigned):
        return "bonus_assigned", {
            "station": event.station,
            "box": event.box,
            "multipliers": [str(m) for m in event.multipliers],
        }
    if isinstance(event, SeatLeft):
        return "seat_left", {"station": event.station}
    raise EngineError(f"not an engine event: {event!r}")


def load_event(kind: str, payload: dict[str, Any]) -> Event:
    if kind == "card":
        return CardDrawn(parse_card(payload["card"]))
    if kind == "burn":
        return Burn(parse_card(payload["card"]))
    if kind == "decision":
        automatic = payload.get("automatic") is True
        return Decision(payload["station"], payload["action"], payload.get("hand"), automatic)
    if kind == "timeout":
        return Timeout(payload.get("station"))
    if kind == "bonus_assigned":
        first, second, third = (Decimal(m) for m in payload["multipliers"])
        return BonusAssigned(payload["station"], payload["box"], (first, second, third))
    if kind == "seat_left":
        return SeatLeft(payload["station"])
    raise EngineError(f"unknown event kind {kind!r}")
