"""Reading a round back: its outcome from the database, in the scenario output's shape.

Hands, special-bet results and credits come from the Hand and Bet rows and the
ledger, the dealer's hand from the event log, never from an engine in memory,
so a lost or doubled ledger entry shows up as a difference.
"""

from __future__ import annotations

from typing import Any

from payouts import ledger
from rounds.models import Round
from rounds.replay import rebuild
from stations.models import Station


def dealer_outcome_key(round: Round) -> str | None:
    """The cache key of a settled round's dealer outcome (stations/selectors.py keeps it; a
    correction of the settled round drops it)."""
    if round.settled_at is None:
        return None
    return f"tablehub:dealer-outcome:{round.pk}:{round.settled_at.timestamp()}"


def money(value) -> str:
    return f"{value:.2f}"


def round_outcome(round: Round, stations: list[Station]) -> dict[str, Any]:
    engine = rebuild(round)
    out: dict[str, Any] = {"dealer": engine.dealer_outcome(), "stations": {}}
    for station in stations:
        hands = list(round.hands.filter(station=station).order_by("position"))
        specials = round.bets.filter(station=station).exclude(code="main").order_by("box", "pk")
        out["stations"][station.name] = {
            "credits": money(ledger.balance(station)),
            "hands": [
                {
                    "box": h.box,
                    "cards": h.cards,
                    "stake": money(h.stake),
                    "result": h.result,
                    "returned": money(h.returned),
                }
                for h in hands
            ],
            "special": [
                {
                    "box": b.box,
                    "bet": b.code,
                    "stake": money(b.stake),
                    "combination": b.combination or None,
                    "returned": money(b.returned),
                }
                for b in specials
            ],
            "insurance": [
                {"box": h.box, "stake": money(h.insurance), "returned": money(h.insurance_returned)}
                for h in hands
                if h.insurance is not None
            ],
        }
    out["burned"] = [e.payload["card"] for e in round.events.filter(kind="burn").order_by("seq")]
    return out
