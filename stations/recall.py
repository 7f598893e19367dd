"""Game recall at the station (docs/protocol.md, "Recall"): the station's last games, each
read from the round's event log and the ledger through the API's recall (rounds/recall.py),
cut to what is the station's own: the public cards by step, its decisions and who made them
(the player, the timer, the automatic strategy of an abandoned hand), its wagers and results,
and its credits before and after the game. Never another station's bets or money."""

from __future__ import annotations

from typing import Any

from payouts import ledger
from rounds.engine.money import fmt
from rounds.models import ENDED, Round
from rounds.recall import recall, station_rounds
from stations.models import Station

DEFAULT_GAMES = 10


def station_recall(station: Station, games: int = DEFAULT_GAMES) -> list[dict[str, Any]]:
    """The station's last ``games`` ended rounds with a stake, newest first."""
    ids = list(station_rounds(station)[: games * 2])  # a round still in play is left out
    rounds = Round.objects.filter(pk__in=ids, phase__in=ENDED).order_by("-pk")[:games]
    return [_game(station, round) for round in rounds]


def _game(station: Station, round: Round) -> dict[str, Any]:
    whole = recall(round)
    name = station.name
    before, after = ledger.credits_around(station, round)
    mine = [h for h in whole["hands"] if h["station"] == name]
    return {
        "round": round.pk,
        "phase": round.phase,
        "settled_at": whole["round"]["settled_at"],
        "credits_before": fmt(before),
        "credits_after": fmt(after),
        "bets": [
            {k: b[k] for k in ("box", "bet", "stake", "combination", "returned")}
            for b in whole["bets"]
            if b["station"] == name
        ],
        "cards": [
            {"card": c["card"], "to": c.get("to"), "box": c.get("box")}
            for c in whole["cards"]
            if c.get("to") not in ("burn", "out")
        ],
        "steps": _steps(name, whole),
        "dealer": whole["dealer"],
        "hands": [{k: h[k] for k in ("box", "cards", "stake", "result", "returned")} for h in mine],
    }


def _steps(name: str, whole: dict[str, Any]) -> list[dict[str, Any]]:
    """The station's decisions and timeouts in the order they were logged."""
    steps = []
    for item in whole["decisions"]:
        if item["station"] == name:
            steps.append(
                {
                    "seq": item["seq"],
                    "action": item["action"],
                    "hand": item["hand"],
                    "by": item["by"],
                }
            )
    for item in whole["timeouts"]:
        touched = any(h["station"] == name for h in item["hands"])
        if item["station"] == name or (item["station"] is None and touched):
            steps.append({"seq": item["seq"], "action": "timeout", "hand": None, "by": "timer"})
    return sorted(steps, key=lambda s: s["seq"])
