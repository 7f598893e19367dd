"""Game recall: the whole record of one round, built once for the admin and the API.

The record is read from the round's event log replayed through the rules engine (the log
is the truth, DESIGN.md principle 2), plus the rows written from it: the configuration
version the round opened with, every bet, every card with where it went (the engine's
public ``card`` notices carry ``to``), every decision and timeout with the hands they
left, the dealer's hand, every hand's and special bet's settlement, every ledger entry,
and the interventions that are not engine events (a void: ``{"by", "reason"}``; a dispute, its
resolution, a correction, a discarded card: rounds/disputes.py, rounds/corrections.py). A
corrected card is shown as corrected (``corrected_from`` the card first logged; its event
``corrected_to``; a card taken out of play: ``to`` ``out``), and the round is replayed with
the corrections, as the table plays it.

While a round is in play the recall hides what the table hides (DESIGN.md principle 5):
the hole card until it is turned, and In For 6 multipliers until they are picked.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import chain
from rounds.engine import EngineError
from rounds.models import CARD_KINDS, ENDED, ENGINE_KINDS, Round, RoundEvent
from rounds.replay import Fixes, Step, corrections_of, replay
from tablehub import fair_shoe


def plain(value: Any) -> Any:
    """JSON-ready: Decimals as strings, tuples as lists."""
    if isinstance(value, Decimal):
        return f"{value:.2f}" if value == value.quantize(Decimal("0.01")) else str(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def money(value: Decimal | None) -> str | None:
    return None if value is None else f"{value:.2f}"


def recall(round: Round) -> dict[str, Any]:
    """The full record of ``round`` (see the module docstring); JSON-ready."""
    round = Round.objects.select_related("table__jurisdiction", "config").get(pk=round.pk)
    over = round.phase in ENDED
    config = round.config
    events, cards, decisions, timeouts, interventions, engine = _replay(round, over)
    dealer: dict[str, Any] | None = None
    if engine is not None:
        dealer = engine.dealer_outcome() if over else engine.public_view()["dealer"]
    return {
        "round": {
            "id": round.pk,
            "number": round.number,
            "table": {"id": round.table_id, "name": round.table.name},
            "jurisdiction": round.table.jurisdiction.code,
            "phase": round.phase,
            "created_at": round.created_at.isoformat(),
            "settled_at": round.settled_at.isoformat() if round.settled_at else None,
            "shoe": round.shoe_id,
            "last_seq": round.last_seq,
        },
        "config": {
            "id": config.pk,
            "version": config.version,
            "created_at": config.created_at.isoformat(),
            **config.as_data(),
        },
        "bets": [
            {
                "station": b.station.name,
                "station_id": b.station_id,
                "box": b.box,
                "bet": b.code,
                "stake": money(b.stake),
                "combination": b.combination or None,
                "returned": money(b.returned),
            }
            for b in round.bets.select_related("station").order_by("station__name", "box", "pk")
        ],
        "events": events,
        "cards": cards,
        "decisions": decisions,
        "timeouts": timeouts,
        "dealer": dealer,
        "hands": [
            {
                "station": h.station.name,
                "box": h.box,
                "position": h.position,
                "cards": h.cards,
                "stake": money(h.stake),
                "result": h.result,
                "returned": money(h.returned),
                "insurance": money(h.insurance),
                "insurance_returned": money(h.insurance_returned),
            }
            for h in round.hands.select_related("station").order_by("station__name", "position")
        ],
        "ledger": _ledger(round),
        "interventions": interventions,
        # Whether the round's events and ledger entries are as written: each row's link
        # recomputed from its content and its predecessor's (rounds/chain.py).
        "integrity": chain.round_integrity(round.pk, round.table_id),
        # The virtual shoe's shuffles the round was dealt from: each commitment, and its
        # seed and order once revealed (tablehub/fair_shoe.py); none for a reader's cards.
        "virtual_shoe": fair_shoe.round_shuffles(round),
    }


def shown_payload(event: RoundEvent) -> dict[str, Any]:
    """``event``'s payload as the recall shows it: while its round is in play, the face-down
    hole card (and a correction of it) and unpicked In For 6 multipliers are hidden."""
    round = Round.objects.get(pk=event.round_id)
    events = _replay(round, round.phase in ENDED)[0]
    return next(e["payload"] for e in events if e["seq"] == event.seq)


def _replay(round: Round, over: bool):
    """Events with their public effects, and the lists drawn from them."""
    events: list[dict[str, Any]] = []
    cards: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []
    timeouts: list[dict[str, Any]] = []
    interventions: list[dict[str, Any]] = []
    hole: list[tuple[dict[str, Any], dict[str, Any]]] = []
    rows = list(round.events.order_by("seq"))
    fixes = corrections_of(rows)  # a card corrected, or taken out of play, by a supervisor
    entries: dict[int, dict[str, Any]] = {}
    for row in rows:
        entry: dict[str, Any] = {
            "seq": row.seq,
            "at": row.created_at.isoformat(),
            "kind": row.kind,
            "payload": dict(row.payload),
        }
        events.append(entry)
        entries[row.seq] = entry
        if row.kind in CARD_KINDS and row.seq in fixes:
            entry["corrected_to"] = fixes[row.seq]
        if row.kind != RoundEvent.Kind.BETS_CLOSED and row.kind not in ENGINE_KINDS:
            interventions.append(
                {"seq": row.seq, "at": entry["at"], "kind": row.kind, **row.payload}
            )

    def observe(step: Step) -> None:
        row, payload, entry = step.row, step.payload, entries[step.row.seq]
        if step.out_of_play:  # no input of the game
            cards.append({"seq": row.seq, "card": row.payload["card"], "to": "out"})
            return
        public = [plain(n.message) for n in step.notices if n.to == "public"]
        entry["public"] = [m for m in public if m.get("type") != "dealer"]
        if row.kind == RoundEvent.Kind.CARD:
            placed = next((m for m in public if m.get("type") in ("card", "hole_card_dealt")), None)
            card: dict[str, Any] = {"seq": row.seq, "card": payload["card"]}
            if step.corrected_from is not None:
                card["corrected_from"] = step.corrected_from
            face_down = placed is None or placed["type"] == "hole_card_dealt"
            if face_down or step.awaiting_before == "hole":
                card["to"] = "hole"
                hole[:] = [(card, entry)]
            else:
                assert placed is not None  # not face down: a notice placed the card
                card.update({k: v for k, v in placed.items() if k in ("to", "box", "boxes")})
            cards.append(card)
        elif row.kind == RoundEvent.Kind.BURN:
            cards.append({"seq": row.seq, "card": payload["card"], "to": "burn"})
        elif row.kind == RoundEvent.Kind.BONUS_ASSIGNED and not over:
            entry["payload"] = {k: v for k, v in row.payload.items() if k != "multipliers"}
        elif row.kind in (RoundEvent.Kind.DECISION, RoundEvent.Kind.TIMEOUT):
            hands = [
                {"station": n.to, **plain(n.message["hand"])}
                for n in step.notices
                if n.to != "public" and n.message.get("type") == "hand"
            ]
            item = {"seq": row.seq, "at": entry["at"], **row.payload, "hands": hands}
            # who answered: the player, the timer, or the automatic strategy of an abandoned
            # hand (payouts/maingame/abandoned.py)
            if row.kind == RoundEvent.Kind.TIMEOUT:
                item["by"] = "timer"
            else:
                item["by"] = "strategy" if row.payload.get("automatic") else "player"
            (decisions if row.kind == RoundEvent.Kind.DECISION else timeouts).append(item)

    def refused(row: RoundEvent, exc: EngineError, fixes: Fixes) -> None:
        entries[row.seq]["replay_error"] = exc.line()  # a log the engine refuses: shown

    engine = replay(round, rows, fixes=fixes, observe=observe, refused=refused)
    if hole and not over and engine is not None and not engine.hole_revealed:
        card, entry = hole[0]
        card["card"] = "face_down"
        card.pop("corrected_from", None)
        entry["payload"] = {"card": "face_down"}
        entry.pop("corrected_to", None)
        _hide_corrections_of(card["seq"], events, interventions)
    return events, cards, decisions, timeouts, interventions, engine


def _hide_corrections_of(seq: int, events: list, interventions: list) -> None:
    """A correction of the hole card names it: face down until it is turned."""

    def hidden(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        down = {"was": "face_down", "card": "face_down"}
        return [c | down if c.get("seq") == seq else c for c in changes]

    for item in events:
        if item["kind"] == "correction":
            item["payload"] = {**item["payload"], "changes": hidden(item["payload"]["changes"])}
    for item in interventions:
        if item["kind"] == "correction":
            item["changes"] = hidden(item["changes"])


def _ledger(round: Round) -> dict[str, Any]:
    entries = LedgerEntry.objects.filter(round=round).select_related("station").order_by("pk")
    rows = [
        {
            "id": e.pk,
            "station": e.station.name if e.station else None,
            "kind": e.kind,
            "amount": money(e.amount),
            "key": e.key,
            "at": e.created_at.isoformat(),
        }
        for e in entries
    ]
    totals = ledger.round_totals(round)
    staked = -totals.get(LedgerEntry.Kind.STAKE, Decimal(0))
    returned = totals.get(LedgerEntry.Kind.RETURN, Decimal(0))
    refunded = totals.get(LedgerEntry.Kind.REFUND, Decimal(0))
    # What a void or correction took back beyond a station's credits (it had cashed out).
    house_loss = totals.get(LedgerEntry.Kind.HOUSE_LOSS, Decimal(0))
    return {
        "entries": rows,
        "staked": money(staked),
        "returned": money(returned),
        "refunded": money(refunded),
        "house_loss": money(house_loss),
        "house_result": money(staked - returned - refunded - house_loss),
    }


def station_rounds(station):
    """The rounds a station staked in, newest first, as a queryset of round ids read through
    the ledger's (station, round) index: the last 100 come at once however long the history."""
    return (
        LedgerEntry.objects.filter(station=station, round__isnull=False)
        .values_list("round_id", flat=True)
        .distinct()
        .order_by("-round_id")
    )
