"""Reading a round back: its outcome from the database, in the scenario output's shape.

Hands, special-bet results and credits come from the Hand and Bet rows and the
ledger, the dealer's hand from the event log, never from an engine in memory,
so a lost or doubled ledger entry shows up as a difference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from django.core.cache import cache

from payouts import ledger
from rounds.engine import EngineError
from rounds.models import Round, RoundEvent
from rounds.replay import rebuild
from stations.models import Station


def dealer_outcome_key(round: Round) -> str | None:
    """The cache key of a settled round's dealer outcome (stations/selectors.py keeps it; a
    correction of the settled round drops it)."""
    if round.settled_at is None:
        return None
    return f"tablehub:dealer-outcome:{round.pk}:{round.settled_at.timestamp()}"


def dealer_outcomes(rounds: Sequence[Round]) -> dict[int, dict[str, Any]]:
    """The dealer's final hand of each settled round (``total``, ``bust``, ``blackjack``), by
    round id: replayed once per round and then kept in the cache (``dealer_outcome_key``; it
    never changes but by a correction, which drops it). A round whose log cannot be replayed
    is left out. The rounds need their ``table`` and ``config`` (select_related)."""
    keys = {r.pk: dealer_outcome_key(r) for r in rounds}
    cached = cache.get_many([k for k in keys.values() if k])
    outcomes: dict[int, dict[str, Any]] = {}
    fresh = {}
    for round in rounds:
        key = keys[round.pk]
        outcome = cached.get(key) if key else None
        if outcome is None:
            try:
                dealer = rebuild(round).dealer_outcome()
            except EngineError:  # a round without a log to replay: nothing to show
                continue
            outcome = {"total": dealer["total"], "bust": dealer["bust"]}
            outcome["blackjack"] = dealer["blackjack"]
            if key:
                fresh[key] = outcome
        outcomes[round.pk] = outcome
    if fresh:
        cache.set_many(fresh, timeout=None)
    return outcomes


def dealt_cards(round_ids: Iterable[int]) -> Counter[str]:
    """The copies of each card the rounds dealt (card and burn events), as corrected: a
    misread counts as the card it was corrected to; a card taken out of play still left the
    shoe and stays counted."""
    dealt: Counter[str] = Counter()
    events = RoundEvent.objects.filter(
        round_id__in=list(round_ids),
        kind__in=[RoundEvent.Kind.CARD, RoundEvent.Kind.BURN, RoundEvent.Kind.CORRECTION],
    ).order_by("round_id", "seq")
    for kind, payload in events.values_list("kind", "payload"):
        if kind == RoundEvent.Kind.CORRECTION:
            for change in payload.get("changes", []):
                if change.get("card"):  # misread: the card dealt was this one, not ``was``
                    dealt[change["was"]] -= 1
                    dealt[change["card"]] += 1
        else:
            dealt[payload["card"]] += 1
    return Counter({card: n for card, n in dealt.items() if n > 0})


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
