"""What the croupier tablet shows (docs/croupier.md, "State"): the table, the round in
progress (or the last one, to pay and clear), the dealer's next physical action, the
stations playing, the shoe, and every card with where it went.

The tablet faces the players: the state is built from the engine's public view and public
notices only, so the hole card is never in it before the dealer reveals it.

At a seat-mode table (``TableConfig.play``) the state also has ``seating``: who sits at each
seat now, which seats have their own main bet this round, whose turn it is, who left, and
the order the deal goes in (seat 1, the dealer's left, first; the hole card only as a place).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, Generic, TypeVar

from django.db import transaction
from django.utils import timezone

from rounds import disputes, voids, writer
from rounds.engine import EngineError
from rounds.engine import Round as Engine
from rounds.models import ENDED, IN_PLAY, Round, RoundEvent
from rounds.replay import Step, catch_up
from rounds.replay import replay as replay_round
from stations.seats import is_seat_mode, seats_of
from tablehub import fair_shoe
from tablehub.models import Table


def current_round(table: Table) -> Round | None:
    """The round in progress (betting or being dealt), if any."""
    return table.rounds.exclude(phase__in=ENDED).order_by("-pk").first()


def croupier_state(table: Table) -> dict[str, Any]:
    """Everything the tablet shows: the table, the round (public view, the dealer's next
    action, the stations, the cards scanned and where each went), the previous round while
    bets are open, and the shoe. Never the hole card before the reveal."""
    table = Table.objects.get(pk=table.pk)
    round = current_round(table) or table.rounds.order_by("-pk").first()
    previous = None
    if round is not None and round.phase == Round.Phase.BETTING:
        last = table.rounds.filter(pk__lt=round.pk).order_by("-pk").first()
        previous = round_state(last, table) if last is not None else None
    shoe = table.shoes.filter(closed_at__isnull=True).order_by("-pk").first()
    current = round_state(round, table) if round is not None else None
    if previous is None and current is not None and current["phase"] in IN_PLAY:
        # a dispute of the last round may be open while this one is dealt
        assert round is not None  # current is its state
        last = table.rounds.filter(pk__lt=round.pk).order_by("-pk").first()
        if last is not None and writer.is_halted(last):
            previous = round_state(last, table)
    return {
        "table": {
            "id": table.pk,
            "name": table.name,
            "is_open": table.is_open,
            "mode": table.mode,
            "boxes": table.boxes,
            "currency": table.currency,
        },
        "round": current,
        "previous": previous,
        "awaiting": awaiting(current),
        "disputes": disputes.table_disputes(table),
        "shoe": None
        if shoe is None
        else {
            "id": shoe.pk,
            "decks": shoe.decks,
            "cards_drawn": shoe.cards_drawn,
            "reader_seq": shoe.reader_seq,
            "started_at": shoe.started_at.isoformat(),
        },
        # The virtual shoe's commitment before its first card (docs/integrity.md); null with
        # a card reader's shoe.
        "virtual_shoe": fair_shoe.current_commitment(table.pk),
        "seating": seating_state(table, round, current),
        "now": timezone.now().isoformat(),
    }


def seating_state(
    table: Table, round: Round | None, current: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Seat mode on the tablet (None: common draw): ``seats`` who sits where now; ``bet`` the
    seats with their own main bet in the round on screen; ``turn`` the seat deciding (or
    waiting for its card), ``left`` the seated players who got up mid-round; ``deal`` the
    places the deal's cards go to, in order ("box:1", "dealer_up", "hole"), and ``dealt``
    how many of them are down."""
    config = round.config if round is not None else table.current_config()
    if not is_seat_mode(config):
        return None
    assert config is not None
    seats = seats_of(table.pk)
    view = current["view"] if current is not None else None
    if current is None or current["phase"] == Round.Phase.VOID:
        bet: list[int] = []
    elif view is None:  # betting: the seats whose own player has a main bet so far
        assert round is not None
        rows = round.bets.filter(code="main").values_list("box", "station__name")
        bet = sorted({box for box, name in rows if seats.get(str(box)) == name})
    else:
        bet = list(current["boxes_bet"])
    deal = [f"box:{b}" for b in bet] + ["dealer_up"] + [f"box:{b}" for b in bet]
    if config.ruleset().hole_card:
        deal.append("hole")
    drawn = [c for c in current["cards"] if c["to"] not in ("burn", "out")] if current else []
    return {
        "seats": seats,
        "bet": bet,
        "turn": view.get("turn") if view is not None else None,
        "left": view.get("left", []) if view is not None else [],
        "deal": deal if bet else [],
        "dealt": min(len(drawn), len(deal)) if bet else 0,
    }


def awaiting(round: dict[str, Any] | None) -> str:
    """The dealer's next physical action: the engine's prompt once bets are closed
    ("deal box 2", "draw a card", "reveal hole card, dealer draws", "pay and clear", "wait for the
    stations"), "close bets" while bets are open, "open bets" with no round open."""
    if round is None:
        return "open bets"
    if round.get("halted") and round["phase"] != Round.Phase.SETTLED:
        return "dispute: wait for a supervisor"
    if round["phase"] == Round.Phase.BETTING:
        return "close bets"
    if round["phase"] == Round.Phase.VOID or round["view"] is None:
        return "open bets"
    return round["view"]["awaiting"]


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Kept(Generic[K, V]):
    """What this process keeps for the tablet, the last ``size`` entries used, shared by the
    threads that build states."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def take(self, key: K) -> V | None:
        """The entry, no longer kept: its taker changes it, and puts it back."""
        with self._lock:
            return self._entries.pop(key, None)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


# The tablet states of rounds that are over, by what can change them. A settled or void
# round changes only by a record appended to its log (a dispute, its resolution, a
# correction, a discard), which moves its ``last_seq``, or by a halt, which moves its
# ``step_key``. While the next round's bets are open the tablet shows it beside them and
# asks for its state 120 ms after each change of bets (tablet.js): at 1000 stations a replay
# of it cost 64 to 108 ms of the database thread each time (docs/benchmarks.md).
_ENDED_STATES: _Kept[tuple[Any, ...], dict[str, Any]] = _Kept(8)


def round_state(round: Round, table: Table) -> dict[str, Any]:
    """The tablet's view of one round (read only: a round that is over may be a kept one)."""
    round.table = table  # (its jurisdiction: the dispute window)
    if round.phase not in ENDED:
        return _round_state(round, table)
    until = disputes.window_end(round)
    # Its creation time too: a round's id is never used again in one database, but tests
    # roll theirs back and use it again.
    key: tuple[Any, ...] = (round.pk, round.created_at, round.last_seq, round.phase)
    key += (round.step_key, round.settled_at, until, table.boxes)
    state = _ENDED_STATES.get(key)
    if state is None:
        state = _round_state(round, table)
        transaction.on_commit(partial(_ENDED_STATES.put, key, state))  # as ``replayed``
    return state


def _round_state(round: Round, table: Table) -> dict[str, Any]:
    state: dict[str, Any] = {
        "id": round.pk,
        "number": round.number,
        "phase": round.phase,
        "deadline": round.deadline.isoformat() if round.deadline else None,
        "card_for": None,
        "view": None,
        "cards": [],
        "stations": [],
        "void": voids.void_record(round),
        "halted": writer.is_halted(round),
        "dispute": None,
        "disputes": [],
        "discarded": [],
        "dispute_until": None,
    }
    until = disputes.window_end(round)
    state["dispute_until"] = until.isoformat() if until else None
    with replayed(round) as kept:
        cards = kept.fill(state)
        if kept.engine is not None:
            _fill_from(kept.engine, cards, round, state)
            return state
    # Betting (or cancelled before bets closed): the bets so far.
    bets = round.bets.values_list("station__name", "box")
    names = sorted({name for name, _box in bets})
    state["stations"] = [{"station": n, "done": False, "hands": 0} for n in names]
    state["boxes_bet"] = sorted({box for _name, box in bets})
    state |= {"stations_playing": len(names), "stations_done": 0}
    state |= {"hands": 0, "hands_finished": 0}
    return state


def _fill_from(
    engine: Engine, cards: list[dict[str, Any]], round: Round, state: dict[str, Any]
) -> None:
    """The round's part of ``state`` that its engine and its cards give."""
    view = engine.public_view()
    if round.phase == Round.Phase.VOID:
        view["awaiting"] = "open bets"
    state["view"] = view
    state["cards"] = cards
    state["card_for"] = engine.awaiting_card if round.phase in IN_PLAY else None
    asked = set(engine.prompted_stations)
    for name, seat in engine.seats.items():
        state["stations"].append(
            {
                "station": name,
                "done": name not in asked,
                "hands": len(seat.hands),
                "hands_finished": sum(1 for h in seat.hands if h.finished),
            }
        )
    state["boxes_bet"] = list(engine.boxes_in_play)
    state["stations_playing"] = len(engine.seats)
    state["stations_done"] = len(engine.seats) - len(asked)
    state["hands"] = sum(s["hands"] for s in state["stations"])
    state["hands_finished"] = sum(s["hands_finished"] for s in state["stations"])
    if engine.settled:
        state["dealer"] = engine.dealer_outcome()


class _Replay:
    """A round replayed for the tablet up to its event ``seq``: the engine (None before bets
    close), every card scanned with where it went, and the records (disputes, discarded
    cards). Brought up to date with the events that follow (``replayed``)."""

    def __init__(self, created_at: Any) -> None:
        self.created_at = created_at  # which round of that id (tests use ids again)
        self.seq = 0
        self.engine: Engine | None = None
        self.cards: list[dict[str, Any]] = []
        self.hole: dict[str, Any] = {}  # the hole card's entry, once dealt
        self.hole_was: str | None = None  # the hole card first logged, when corrected
        self.disputes: list[dict[str, Any]] = []
        self.by_seq: dict[int, dict[str, Any]] = {}  # the disputes by their seq
        self.discarded: list[dict[str, Any]] = []

    def observe(self, step: Step) -> None:
        """An input as the replay applied it: the cards its public notices name."""
        row, cards, hole = step.row, self.cards, self.hole
        if step.out_of_play:  # an exposed card, taken out of play by a correction
            cards.append(
                {
                    "n": len(cards) + 1,
                    "seq": row.seq,
                    "card": row.payload["card"],
                    "to": "out",
                    "label": "taken out of play",
                }
            )
            return
        for notice in step.notices:
            if notice.to != "public":
                continue
            entry = _card_entry(notice.message, len(cards) + 1)
            if entry is not None:
                entry["seq"] = row.seq
                cards.append(entry)
                if entry["to"] == "hole":
                    hole.clear()
                    hole["entry"] = entry
                    self.hole_was = step.corrected_from
                elif step.corrected_from is not None:
                    entry["corrected_from"] = step.corrected_from
            elif notice.message["type"] == "hole_card" and hole:
                hole["entry"] |= {"card": notice.message["card"], "label": "hole (shown)"}
                if self.hole_was is not None:  # shown only once the hole card is
                    hole["entry"]["corrected_from"] = self.hole_was

    def record(self, rows: list[RoundEvent]) -> None:
        """The round's disputes (each with its resolution) and discarded cards among rows."""
        for row in rows:
            if row.kind == RoundEvent.Kind.DISPUTE:
                entry = disputes.describe(row) | {"resolved": None}
                self.by_seq[row.seq] = entry
                self.disputes.append(entry)
            elif (
                row.kind == RoundEvent.Kind.DISPUTE_RESOLVED
                and row.payload.get("dispute") in self.by_seq
            ):
                self.by_seq[row.payload["dispute"]]["resolved"] = {
                    "seq": row.seq,
                    "at": row.created_at.isoformat(),
                    "resolution": row.payload.get("resolution"),
                    "by": row.payload.get("by"),
                }
            elif row.kind == RoundEvent.Kind.DISCARD:
                self.discarded.append(
                    {
                        "seq": row.seq,
                        "card": row.payload.get("card"),
                        "reason": row.payload.get("reason"),
                        "by": row.payload.get("by"),
                        "at": row.created_at.isoformat(),
                    }
                )

    def fill(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        """Put the records into ``state`` and return the cards: copies, since this replay
        goes on changing its own (a hole card shown, a dispute resolved)."""
        state["disputes"] = [d | {"resolved": _copy(d["resolved"])} for d in self.disputes]
        state["dispute"] = next((d for d in state["disputes"] if d["resolved"] is None), None)
        state["discarded"] = [dict(d) for d in self.discarded]
        return [dict(card) for card in self.cards]


def _copy(value: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else dict(value)


# This process's tablet replays of rounds in play, each brought up to date with the events
# that follow it instead of replayed whole (``replayed``): the tablet asks for its state
# after each public event (a card, a step), and at 1000 stations a whole replay of a round
# in play cost 33 to 71 ms of the database thread (docs/benchmarks.md).
_REPLAYS: _Kept[int, _Replay] = _Kept(8)


def forget_kept_states() -> None:
    """Drop every round's kept tablet replay and state (as a fresh process has none)."""
    _REPLAYS.clear()
    _ENDED_STATES.clear()


@contextmanager
def replayed(round: Round) -> Iterator[_Replay]:
    """The round's tablet replay as of its events now, its engine to be read, not changed:
    the one kept, brought up to date with the events since (none if it is), or the whole
    log replayed (none kept, or a correction among the new events: it changes cards already
    applied). Its engine is None before bets close. The caller has it alone; it is kept
    again once the caller is done and what it read is committed (at once outside a
    transaction): a rolled back transaction's events must not stay in it."""
    kept = _REPLAYS.take(round.pk)
    if kept is not None and kept.created_at != round.created_at:
        kept = None  # another round of the same id (tests roll theirs back)
    if kept is not None:
        assert kept.engine is not None  # only those are kept
        rows = list(round.events.filter(seq__gt=kept.seq).order_by("seq"))
        try:
            if rows and not catch_up(kept.engine, rows, observe=kept.observe):
                kept = None  # a correction: replayed whole below
        except EngineError:  # the log refuses what this engine was told: replay it whole
            kept = None
        if kept is not None:
            kept.record(rows)
            kept.seq = rows[-1].seq if rows else kept.seq
    if kept is None:
        kept = _Replay(round.created_at)
        rows = list(round.events.order_by("seq"))
        kept.record(rows)
        kept.engine = replay_round(round, rows, observe=kept.observe)
        kept.seq = rows[-1].seq if rows else 0
    yield kept
    if kept.engine is not None:  # before bets close there is nothing to catch up
        transaction.on_commit(partial(_REPLAYS.put, round.pk, kept))


def _card_entry(message: dict[str, Any], n: int) -> dict[str, Any] | None:
    kind = message["type"]
    if kind == "burn":
        return {"n": n, "card": message["card"], "to": "burn", "label": "burn"}
    if kind == "hole_card_dealt":
        return {"n": n, "card": None, "to": "hole", "label": "hole (face down)"}
    if kind != "card":
        return None
    to = message["to"]
    entry = {"n": n, "card": message["card"], "to": to}
    if to == "box":
        entry |= {"box": message["box"], "label": f"box {message['box']}"}
    elif to == "hands":
        boxes = message.get("boxes", [])
        entry |= {"boxes": boxes, "label": "hands: box " + ", ".join(map(str, boxes))}
    elif to == "dealer_up":
        entry["label"] = "dealer up"
    else:
        entry["label"] = "dealer"
    return entry
