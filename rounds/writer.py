"""The round writer: the only code that appends a RoundEvent, advances a round's engine,
writes what an input caused and times the round's next step (DESIGN.md, principle 3).

Dealer commands, station commands, corrections, disputes, voids, the stale-game sweep,
recovery and the timers call its public functions. Each change happens in one transaction
that holds the round's row lock: the input is applied to the engine (a refused input raises
EngineError and writes nothing), appended to the event log, and followed by the ledger
entries it caused, the round's phase and step, and, once the round is settled, the Hand and
Bet results. What each party may see is published after the commit (tablehub.broadcast).

Timers are data (DESIGN.md, principle 4): each step that waits for stations has a key and a
deadline on the round; ``expire`` applies the step's timeout only if the round is still at
that step, and a command arriving after the deadline first applies the expiry itself.

The engine cache. Replaying a round for every input would cost a replay per command, so
each process keeps the engine of the rounds it wrote, with the event seq it is valid for.
A cached engine has one owner at a time: a writer takes it out of the cache under the
round's row lock, and it goes back only when the transaction commits (a failed transaction
simply loses it: the next use replays the log). A reader outside the lock takes it only at
the round's committed seq and puts it back when done, or replays the committed rows; no
thread ever sees an engine that another thread is changing, or a state not committed. When
another server process wrote the round since (several processes serving one table take
turns on it), the cached engine is brought up to date with just those events
(``replay.catch_up``) rather than the whole log replayed, unless a correction is among them.

A batch of station messages (stations/batches.py) is one transaction that locks the table's
open round once, at its start (``holding_the_table``): every writer call of the batch on
that round uses the held row as the transaction changes it, instead of reading it again.
Inside a batch the held round's events wait in memory (as on-commit callbacks, so that a
refused input's block drops its own: tablehub/lazy_savepoint.py) and the held row's
changes are saved once: ``flush`` links the waiting events in the table's chain and inserts
them together, between messages that may read the log (the batch calls it before any
message but a decision), before the replies are read and at the commit.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from payouts import ledger
from payouts.maingame import abandoned
from payouts.specials import bonus
from rounds import chain, receipts, replay, seats, timers
from rounds.engine import Decision, EngineError, Notice, Timeout
from rounds.engine import Round as Engine
from rounds.engine.codec import dump_event
from rounds.engine.money import fmt
from rounds.engine.round import BonusAssigned, Event, SpecialBet
from rounds.models import ENDED, ENGINE_KINDS, Bet, Hand, Round, RoundEvent
from rounds.selectors import dealer_outcome_key
from stations.models import BetSlip, Station
from tablehub import broadcast, lazy_savepoint, metrics, until_commit
from tablehub.compiled import CompiledQuery, Param
from tablehub.models import Jurisdiction, Table
from tablehub.rows import insert_rows, insert_values

log = logging.getLogger("tablehub.rounds")

DEFAULT_TIMER_SECONDS = 15
# A round halted by a dispute has the step key "halted:<seq of the dispute>" and no deadline:
# no input is accepted and a timer of the step before finds nothing to expire (disputes.py).
HALTED = "halted:"
VIDEO_CARD_SECONDS = 0.8  # a video table deals each card this long after it is wanted
RECHECK_SECONDS = 0.025  # an expiry waiting for commands received in time tries again then
TIMED_NOTICES = ("prompt", "step")  # events that carry their step's deadline

T = TypeVar("T")


class TooLate(EngineError):
    """An answer received after its step's deadline: the table's timeout answered for it.
    Its refusal says when each was (the station's clock may differ from the server's)."""

    def __init__(
        self, received_at: datetime, deadline: datetime | None, station: str | None = None
    ) -> None:
        self.received_at, self.deadline = received_at, deadline
        super().__init__(
            "this answer arrived after the step's deadline: the table's timeout answered",
            station,
            code="too_late",
        )

    def at(self, station: str | None = None, box: int | None = None) -> EngineError:
        return TooLate(self.received_at, self.deadline, self.station or station)


@dataclass
class Live:
    """A round as this process knows it: the engine, the seated stations and the ledger keys
    already written, valid for the round's event ``seq``."""

    round_id: int
    seq: int
    engine: Engine
    stations: dict[str, Station]
    books: ledger.RoundBooks  # the round's money items in the ledger now
    generation: int = 0  # the round's last correction (``generation``): part of step keys


class _EngineCache:
    """Committed engines of this process, by round (see the module docstring): ``take``
    hands one over to a single owner, ``put`` takes back a committed one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, Live] = {}

    def take(self, round_id: int, seq: int) -> Live | None:
        with self._lock:
            live = self._entries.get(round_id)
            if live is None or live.seq != seq:
                return None
            return self._entries.pop(round_id)

    def take_older(self, round_id: int, seq: int) -> Live | None:
        """The round's engine if it is of an event before ``seq`` (another process wrote
        since), handed over as ``take`` does."""
        with self._lock:
            live = self._entries.get(round_id)
            if live is None or live.seq >= seq:
                return None
            return self._entries.pop(round_id)

    def put(self, live: Live) -> None:
        with self._lock:
            held = self._entries.get(live.round_id)
            if held is None or held.seq <= live.seq:  # never step back to an older state
                self._entries[live.round_id] = live

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_CACHE = _EngineCache()


class _PutBackOnCommit:
    """The on-commit callback that returns a transaction's engine to the cache. While the
    transaction is open it is also how the transaction finds its own engine again: Django
    drops the callbacks of a rolled-back transaction or savepoint, and the engine with them."""

    def __init__(self, live: Live) -> None:
        self.live: Live | None = live

    def __call__(self) -> None:
        if self.live is not None:
            _CACHE.put(self.live)


def _own(live: Live) -> Live:
    transaction.on_commit(_PutBackOnCommit(live))
    return live


def _in_this_transaction(round_id: int, seq: int, disown: bool = False) -> Live | None:
    """The engine this transaction holds for the round at ``seq``, if any. A writer about
    to change it ``disown``s the callback found (it may belong to an outer savepoint) and
    owns the engine again in its own: if its savepoint rolls back, the engine is lost, not
    returned to the cache changed."""
    for callback in reversed(until_commit.waiting(_PutBackOnCommit)):
        if callback.live is not None:
            if callback.live.round_id == round_id:
                live = callback.live
                if live.seq != seq:
                    return None
                if disown:
                    callback.live = None
                return live
    return None


class _HeldRound(threading.local):
    """The round a batch's transaction locked at its start, in this thread."""

    table_id: int | None = None
    round: Round | None = None
    # The held round's bets of the stations read so far, by station (``stations_bets``),
    # kept up to date by the writer's own changes of them.
    bets: dict[int, list[Bet]] | None = None
    # The held round's slips (chip groups) of the stations read so far, as the database has
    # them (``bet_slip``); the changes this transaction made wait in ``_PendingBets``.
    slips: dict[int, list[Any]] | None = None
    betting: set[int] = set()  # the stations whose bets the batch changes (``expect_bets``)
    # The held row has changes not yet saved (``_write`` saves it once per batch).
    unsaved: bool = False
    depth: int = 0  # the savepoints open when the batch began (``flush``)


_HELD = _HeldRound()
# The round fields the writer changes: restored on the held row when a change is refused
# (its savepoint rolled back what it had written).
_ROUND_STATE = ("last_seq", "phase", "settled_at", "step_key", "deadline")


# The table's open round, as ``current_round`` reads it outside a batch: every card input
# first, to find a step past its deadline (tablehub/compiled.py: its SQL built once).
_OPEN_ROUND = CompiledQuery(
    lambda: (
        Round.objects.filter(table_id=Param("table_id"))
        .exclude(phase__in=ENDED)
        .order_by("-pk")[:1]
    )
)
# The table's open round, locked, with what a batch reads of its table and configuration:
# every batch's first read (tablehub/compiled.py: its SQL built once).
_OPEN_ROUND_LOCKED = CompiledQuery(
    lambda: (
        Round.objects.select_for_update(no_key=True, of=("self",))
        .select_related("table__jurisdiction", "config")
        .filter(table_id=Param("table_id"))
        .exclude(phase__in=ENDED)
        .order_by("-pk")[:1]
    )
)


@contextmanager
def holding_the_table(table_id: int, savepoint: bool = True) -> Iterator[Round | None]:
    """One transaction for a batch of the table's station messages, holding the lock of the
    table's open round (None: no round is open) from its start to its commit. Inside, the
    writer and ``current_round`` use the held row instead of reading it again. A card holds
    it too, inside the transaction that has locked the shoe: with ``savepoint=False`` it
    makes no savepoint there, and a failure undoes the card's transaction whole."""
    assert _HELD.table_id is None, "a batch inside a batch"
    with transaction.atomic(savepoint=savepoint):
        round = _OPEN_ROUND_LOCKED.first(table_id=table_id)
        _HELD.table_id, _HELD.round = table_id, round
        _HELD.unsaved, _HELD.depth = False, len(connection.savepoint_ids)
        try:
            yield round
            flush()
        finally:
            _HELD.table_id = _HELD.round = _HELD.bets = _HELD.slips = None
            _HELD.unsaved, _HELD.betting = False, set()


class _PendingEvent:
    """An event of the held round appended but not yet inserted: a batch inserts its events
    together (``flush``). It waits as an on-commit callback, so that a savepoint rolled back
    (a refused input) drops it with the rest of what the savepoint wrote."""

    def __init__(self, row: RoundEvent) -> None:
        self.row: RoundEvent | None = row

    def __call__(self) -> None:
        pass  # inserted by ``flush`` before the commit


class _PendingBets:
    """A station's bets on the held round changed but not yet written: a batch writes its
    stations' slips and Bet rows together (``flush``). An on-commit callback, as an event
    waiting is, so that a refused change's savepoint drops it."""

    def __init__(
        self, station_id: int, groups: list[Any], stakes: Mapping[tuple[int, str], Decimal]
    ):
        self.station_id, self.groups, self.stakes = station_id, groups, dict(stakes)
        self.written = False

    def __call__(self) -> None:
        pass  # written by ``flush`` before the commit


def _station_of(change: _PendingBets) -> int:
    return change.station_id


def _pending_bets() -> list[_PendingBets]:
    """This transaction's changes of bets not yet written, in their order."""
    return [callback for callback in until_commit.waiting(_PendingBets) if not callback.written]


def _pending(round_id: int | None = None) -> list[_PendingEvent]:
    """This transaction's events not yet inserted (of one round, or all), in their order."""
    return [
        callback
        for callback in until_commit.waiting(_PendingEvent)
        if callback.row is not None and (round_id is None or callback.row.round_id == round_id)
    ]


def _pending_rows(round_id: int) -> list[RoundEvent]:
    """The round's events this transaction has not inserted yet, in their order."""
    return [p.row for p in _pending(round_id) if p.row is not None]


def _log(round_id: int, up_to: int | None = None, after: int = 0) -> list[RoundEvent]:
    """The round's event log (after event ``after``, to ``up_to``), with what this
    transaction has not inserted yet."""
    rows = RoundEvent.objects.filter(round_id=round_id, seq__gt=after).order_by("seq")
    if up_to is not None:
        rows = rows.filter(seq__lte=up_to)
    pending = _pending_rows(round_id)
    return list(rows) + [
        row for row in pending if after < row.seq and (up_to is None or row.seq <= up_to)
    ]


def flush() -> None:
    """Inside a batch, between its messages: insert the events appended so far (linked in
    the table's chain together, one insert), the ledger entries they posted (one insert:
    ``ledger.write_waiting``) and the bets changed, and save the held round's row once. Not
    inside a message's savepoint: one rolled back after the insert would take the rows with
    it."""
    if _HELD.table_id is None:
        return
    assert len(connection.savepoint_ids) == _HELD.depth, "flush inside a message's savepoint"
    pending = _pending()
    new = [p.row for p in pending if p.row is not None]
    if new:
        chain.link_events(_HELD.table_id, new)
        insert_rows(RoundEvent, new)
        for event in pending:
            event.row = None
    ledger.write_waiting()
    _write_bets(_pending_bets())
    if _HELD.unsaved and _HELD.round is not None:
        _HELD.round.save(update_fields=list(_ROUND_STATE))
        _HELD.unsaved = False


def current_round(table_id: int) -> Round | None:
    """The table's round that is not over (betting or in play), if any: the held row inside
    ``holding_the_table``."""
    if _HELD.table_id == table_id:
        held = _HELD.round
        return held if held is not None and held.phase not in ENDED else None
    return _OPEN_ROUND.first(table_id=table_id)


def stations_bets(round: Round, station_ids: Sequence[int]) -> dict[int, list[Bet]]:
    """The stations' bets on the round, by box, by station id, in one query. Inside a batch
    the held round's bets of a station are read once and kept up to date by the writer's
    own changes (a reply per message would read them again each time); only the stations
    asked for are read, so a batch's cost does not grow with the table's other stations."""
    held = _held(round.pk) is not None
    known = _HELD.bets if held and _HELD.bets is not None else {}
    missing = [pk for pk in station_ids if pk not in known]
    found: dict[int, list[Bet]] = {pk: [] for pk in missing}
    if missing:
        for bet in round.bets.filter(station_id__among=missing).order_by("box", "pk"):
            found[bet.station_id].append(bet)
    if held:
        _HELD.bets = known | found
    return {pk: known[pk] if pk in known else found[pk] for pk in station_ids}


def bets_on_boxes(round: Round, boxes: Iterable[int]) -> list[Bet]:
    """Every station's bets on these boxes of the round (the station joined), this batch's
    changes not yet written included: what a seat's cap behind it counts."""
    boxes = set(boxes)
    held = _held(round.pk) is not None
    known = _HELD.bets if held and _HELD.bets is not None else {}
    found = list(
        round.bets.filter(box__in=boxes)
        .exclude(station_id__in=list(known))
        .select_related("station")
    )
    return found + [bet for bets in known.values() for bet in bets if bet.box in boxes]


def closes_the_step(table_id: int, station: str) -> bool:
    """Inside a batch: whether the table's open round waits for ``station`` alone, so that
    its answer would close the step (stations/batches.py writes it in a batch of its own).
    False while no question can be open (bets open, the deal, a halt): the answer is then
    refused, and asking its engine must not fail the batch (there is none to replay)."""
    round = _HELD.round if _HELD.table_id == table_id else None
    if round is None or round.phase in (Round.Phase.BETTING, Round.Phase.DEAL):
        return False
    if not round.step_key or is_halted(round):
        return False
    try:
        return read(round.pk, lambda engine: engine.waits_only_for(station))
    except EngineError:  # a log the engine refuses: the answer itself will say so
        return False


def _held(round_id: int) -> Round | None:
    held = _HELD.round
    return held if held is not None and held.pk == round_id else None


def _locked(round_id: int) -> Round:
    """The round's row, locked until this transaction ends."""
    return _held(round_id) or _for_update().get(pk=round_id)


def locked_round(round_id: int) -> Round | None:
    """The round's row (None: no such round), locked until this transaction ends: the one
    to hand back to the writer's functions that take a locked round (inside a batch, the
    row the batch holds; another copy would be out of date)."""
    return _held(round_id) or _for_update().filter(pk=round_id).first()


def _for_update() -> QuerySet[Round]:
    """Rounds read with their row locked, and their table (a settlement reads whether the
    table is open, a card wanted whether it is a video table): one query, not two."""
    return Round.objects.select_for_update(no_key=True, of=("self",)).select_related("table")


@contextmanager
def _restored_if_refused(round: Round) -> Iterator[None]:
    """A refused change leaves the round as it was: the caller's savepoint rolls back the
    rows, this puts back the fields of the row object (the held row lives on in its batch)."""
    before = {name: getattr(round, name) for name in _ROUND_STATE}
    try:
        yield
    except BaseException:
        for name, value in before.items():
            setattr(round, name, value)
        raise


class _Unchanged(Exception):
    """The engine refused an input before changing anything: the refusal, and the engine,
    still good, on its way out of the savepoint that is rolled back (which drops this
    transaction's claim on it)."""

    def __init__(self, refusal: EngineError, live: Live) -> None:
        super().__init__(refusal)
        self.refusal, self.live = refusal, live


@contextmanager
def _kept_if_unchanged() -> Iterator[None]:
    """Outside a writer's savepoint: an input the engine refused leaves the engine to the
    enclosing transaction (a batch's next message uses it instead of replaying the round),
    and raises the refusal."""
    try:
        yield
    except _Unchanged as unchanged:
        _own(unchanged.live)
        raise unchanged.refusal from None


def forget_cached_engines() -> None:
    """Drop every engine this process holds (as after a restart, or in another process):
    the next use of each round replays its event log."""
    _CACHE.clear()


# -- opening and betting -----------------------------------------------------------------------


def open_round(table: Table) -> Round:
    """Open bets for a new round under the table's current configuration; the betting
    timer starts now."""
    with transaction.atomic():  # the timer starts once the round is saved
        config = table.current_config()
        assert config is not None  # a table without a configuration cannot open a round
        number, dealer_id = _next_number(table)
        round = Round.objects.create(table=table, number=number, config=config, dealer_id=dealer_id)
        _start_timer(round, "betting", "betting")
        round.save(update_fields=["step_key", "deadline"])
        assert round.deadline is not None  # _start_timer gave the step its deadline
        # Every station and tablet learns that bets are open, whoever opened the round.
        opened = Notice(
            "public",
            {"type": "phase", "phase": "betting", "deadline": round.deadline.isoformat()},
        )
        broadcast.publish_on_commit(table.pk, round.pk, 0, [opened])
    return round


def _next_number(table: Table) -> tuple[int, int | None]:
    """The table's next round number (1 for its first round), under the table's row lock so
    that two processes opening a round at once cannot take the same number, and the table's
    dealer on duty, read by the same lock (croupier/dealers.py)."""
    locked = Table.objects.select_for_update(no_key=True).filter(pk=table.pk)
    dealer_id = locked.values_list("dealer_id", flat=True).get()
    newest = table.rounds.order_by("-number").values_list("number", flat=True).first()
    return (newest or 0) + 1, dealer_id


def timer_seconds(round: Round, phase: str) -> float:
    """The table's timer for a step, never longer than the jurisdiction allows."""
    timers_config = round.config.timers
    seconds = timers_config.get(phase, timers_config.get("decision", DEFAULT_TIMER_SECONDS))
    return min(float(seconds), float(round.table.jurisdiction.max_decision_seconds))


def lock_for_betting(round_id: int) -> Round:
    """Lock the round for a change of bets: a change racing the close of bets is either in
    before it or refused (``bets_closed``). The caller applied a late expiry first
    (``expire_if_late``), so a change after the betting deadline is refused too."""
    round = _locked(round_id)
    if round.phase != Round.Phase.BETTING:
        raise EngineError("bets are closed", code="bets_closed")
    return round


def expect_bets(station_ids: Iterable[int]) -> None:
    """Inside a batch: these stations' messages change bets (``bet_slip`` reads their slips
    together)."""
    _HELD.betting = set(station_ids)


# A batch's betting stations' slips (tablehub/compiled.py: its SQL built once).
_SLIPS = CompiledQuery(
    lambda: BetSlip.objects.filter(
        round_id=Param("round_id"), station_id__among=Param("ids")
    ).values_list("station_id", "groups")
)


def bet_slip(round: Round, station: Station) -> list[Any]:
    """The station's slip on the round (locked by ``lock_for_betting``): its chip groups in
    the order they were put down. Inside a batch, the slips of the stations it expects bets
    from (``expect_bets``) are read together, once, and its own changes come from memory."""
    if _held(round.pk) is None:
        slip = BetSlip.objects.filter(round=round, station=station).values_list("groups")
        return list((slip.first() or ([],))[0])
    change = until_commit.last_by(_PendingBets, _station_of).get(station.pk)
    if change is not None and not change.written:  # the last change, not yet written
        return list(change.groups)
    known = _HELD.slips if _HELD.slips is not None else {}
    if station.pk not in known:
        wanted = {station.pk, *_HELD.betting} - known.keys()
        read = dict(_SLIPS.list(round_id=round.pk, ids=wanted))
        _HELD.slips = known = known | {pk: read.get(pk, []) for pk in wanted}
    return list(known[station.pk])


def set_bets(
    round: Round,
    station: Station,
    groups: list[Any],
    stakes: Mapping[tuple[int, str], Decimal],
) -> None:
    """The station's bets on the round (locked by ``lock_for_betting``) become ``stakes``,
    (box, bet code) -> stake, put down as the slip's chip ``groups``; the station's checks
    (stations/commands.py) come first. Inside a batch they are written with the batch's
    other stations' at its ``flush``."""
    if _held(round.pk) is None:
        _write_bets([_PendingBets(station.pk, groups, stakes)], round)
        return
    transaction.on_commit(_PendingBets(station.pk, groups, stakes))
    bets = [
        Bet(round=round, station=station, box=b, code=c, stake=v) for (b, c), v in stakes.items()
    ]
    # The station's whole set, known without a read (the replies show box, bet and stake).
    _HELD.bets = (_HELD.bets or {}) | {station.pk: sorted(bets, key=lambda bet: bet.box)}


def _write_bets(changes: list[_PendingBets], round: Round | None = None) -> None:
    """Write the last change of each station's bets: the slips in one statement, the Bet rows
    in two (the old ones deleted, the new ones inserted)."""
    if not changes:
        return
    round = round or _HELD.round
    assert round is not None
    last = {change.station_id: change for change in changes}
    insert_values(
        BetSlip,
        [{"round_id": round.pk, "station_id": pk, "groups": c.groups} for pk, c in last.items()],
        update_on=["round", "station"],
        update=["groups"],
    )
    Bet.objects.filter(round=round, station_id__among=last).delete()
    insert_values(
        Bet,
        (
            {"round_id": round.pk, "station_id": pk, "box": box, "code": code, "stake": stake}
            for pk, change in last.items()
            for (box, code), stake in change.stakes.items()
        ),
    )
    for change in changes:
        change.written = True
    if _held(round.pk) is not None:
        _HELD.slips = (_HELD.slips or {}) | {pk: c.groups for pk, c in last.items()}


def close_bets(round_id: int) -> list[Notice]:
    """Close bets: build the engine round, take every stake through the ledger."""
    with transaction.atomic():
        round = _locked(round_id)
        with _restored_if_refused(round):
            return _close_bets(round)


def _close_bets(round: Round) -> list[Notice]:
    if round.phase != Round.Phase.BETTING:
        raise EngineError("bets are already closed", code="bets_closed")
    # A change of bets waiting to be written would be written after the close (``flush``).
    assert _held(round.pk) is None or not _pending_bets(), "bets closed with bets unwritten"
    bets = list(round.bets.select_related("station").order_by("station__name", "box", "pk"))
    # The stations' credits, locked: nothing takes money from them until the stakes are in.
    balances = ledger.lock_credits(b.station for b in bets)
    seating = seats.seating_of(round)
    refusals = _uncovered(bets, balances)
    if seating is not None:
        refusals |= seats.refusals(seating, [b for b in bets if b.station_id not in refusals])
    refused = _take_off(round, bets, refusals)
    bets = [b for b in bets if b.station_id not in refused]
    if not bets:  # nobody bet: keep betting open for another betting time
        windows = int(round.step_key.partition(":")[2] or 0) + 1
        _start_timer(round, f"betting:{windows}", "betting")  # a stale timer cannot close it
        round.save(update_fields=["step_key", "deadline"])
        publish(round, list(refused.values()))
        assert round.deadline is not None  # _start_timer gave the step its deadline
        # Every station and tablet counts down to the new deadline, never to 0 while waiting.
        restarted = {"deadline": round.deadline.isoformat(), "window": windows + 1}
        publish_news(round, [Notice("public", {"type": "betting_restarted", **restarted})])
        return []
    credits = {b.station.name: balances[b.station_id] for b in bets}
    payload: dict[str, Any] = {
        "bets": [[b.station.name, b.box, b.code, str(b.stake)] for b in bets],
        "credits": {name: str(amount) for name, amount in credits.items()},
    }
    if seating is not None:
        payload["seating"] = seating.as_data()
    live = _own(_live(round, replay.new_engine(round, payload), ledger.RoundBooks()))
    _append(round, RoundEvent.Kind.BETS_CLOSED, payload)
    _write(round, live)
    notices = [live.engine.dealer_prompt()]  # "deal box 1"
    publish(round, [*refused.values(), *notices])
    # The other server processes load the engine built here before the first card comes.
    broadcast.round_ready_on_commit(round.table_id, round.pk)
    return notices


def _uncovered(bets: list[Bet], credits: Mapping[int, Decimal]) -> dict[int, EngineError]:
    """The stations whose credits (locked) no longer cover their stakes, as a correction or a
    void of an earlier round can leave them (the stations' checks made every bet fit when it
    was placed). Station id -> why."""
    staked: dict[int, Decimal] = {}
    for b in bets:
        staked[b.station_id] = staked.get(b.station_id, Decimal(0)) + b.stake
    refused: dict[int, EngineError] = {}
    for b in bets:
        if b.station_id in refused or staked[b.station_id] <= credits[b.station_id]:
            continue
        refused[b.station_id] = EngineError(
            f"credits {fmt(credits[b.station_id])} do not cover the stakes "
            f"{fmt(staked[b.station_id])}",
            b.station.name,
            code="insufficient_credits",
        )
    return refused


def _take_off(
    round: Round, bets: list[Bet], refusals: Mapping[int, EngineError]
) -> dict[int, Notice]:
    """Take off every bet of each refused station at the close: that station is told why and
    the table goes on without its bets. Station id -> its notice."""
    refused: dict[int, Notice] = {}
    for station_id, error in refusals.items():
        name = next(b.station.name for b in bets if b.station_id == station_id)
        refused[station_id] = Notice(
            name, {"type": "bets_refused", "code": error.code, "message": error.line()}
        )
        log.warning(
            "table %s round %s: bets refused at the close: %s",
            round.table_id,
            round.pk,
            error.line(),
        )
    if refused:
        round.bets.filter(station_id__in=refused).delete()
        if _HELD.bets is not None and _held(round.pk) is not None:
            for station_id in refused:
                _HELD.bets[station_id] = []
        BetSlip.objects.filter(round=round, station_id__in=refused).delete()
    return refused


# -- the round in play -------------------------------------------------------------------------


def record(round_id: int, event: Event, at: datetime | None = None) -> list[Notice]:
    """Apply one input to the round; return what each party may now see. ``at`` is when a
    station's command was received: a decision received after the step's deadline is
    refused (``too_late``) and the step's timeout answers for it; one received in time is
    applied however late it is processed. Without ``at`` (the dealer, the card reader, the
    server itself) the input counts as received now, and a late one first applies the
    step's timeout. A timeout's own answers (a ``Timeout``, an automatic decision) are not."""
    notices: list[Notice] = []
    if not isinstance(event, Timeout) and not (isinstance(event, Decision) and event.automatic):
        step = _held(round_id) or Round.objects.only("deadline", "step_key").get(pk=round_id)
        step_key, deadline = step.step_key, step.deadline  # before the expiry moves them on
        late = past_deadline(step, at or timezone.now())
        # The expiry stands on its own: it is committed even if the late command is refused.
        notices = expire(round_id, step_key) if late else []
        if late and at is not None and isinstance(event, Decision):
            assert deadline is not None  # a step past its deadline has one
            raise TooLate(at, deadline)
    try:
        # Inside a batch, a savepoint only if the input writes (tablehub/lazy_savepoint.py).
        with _kept_if_unchanged(), lazy_savepoint.atomic():
            round = _locked(round_id)
            with _restored_if_refused(round):
                return notices + _record(round, event)
    except EngineError as exc:
        if at is not None and isinstance(event, Decision) and exc.code == "not_your_turn":
            # Its step timed out while the answer waited: late, not out of turn.
            if timed_out_after(round.table_id, at, exc.station):
                raise TooLate(at, None, exc.station) from None
        raise


def timed_out_after(table_id: int, at: datetime, station: str | None) -> bool:
    """Whether a step of the table's last round that ``station`` played timed out after
    ``at``: an answer received at ``at`` that finds no question open came too late (the
    timeout answered for it, the round may even be over), not out of turn."""
    last = (
        Round.objects.filter(table_id=table_id, bets__station__name=station)
        .exclude(phase=Round.Phase.BETTING)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    if last is None:
        return False
    timeouts = RoundEvent.objects.filter(round_id=last, kind=RoundEvent.Kind.TIMEOUT)
    if timeouts.filter(created_at__gt=at).exists():
        return True
    return any(  # a timeout of this batch, not yet inserted
        row.kind == RoundEvent.Kind.TIMEOUT and row.created_at > at for row in _pending_rows(last)
    )


def _record(round: Round, event: Event) -> list[Notice]:
    if is_halted(round):
        raise EngineError(
            f"round {round.pk} is halted by a dispute: wait for the supervisor",
            code="round_halted",
        )
    live = _locked_live(round)
    seq = round.last_seq
    try:
        notices = list(_apply(round, live, event))  # a copy: the published list must not grow
    except EngineError as refusal:
        if round.last_seq == seq:  # refused before anything was written: the engine is as it was
            raise _Unchanged(refusal, live) from None
        raise
    for station, box, multipliers in live.engine.awaiting_bonus:
        # In For 6: the server assigns the hidden multipliers before anyone picks.
        order = bonus.assign_multipliers(station, box, multipliers)
        notices += _apply(round, live, BonusAssigned(station, box, order))
    return notices


def expire(round_id: int, step_key: str) -> list[Notice]:
    """A step's deadline has passed: close bets, or time out every open question.
    Idempotent: nothing happens when the round is no longer at that step. While a command
    received before the deadline is still being handled (rounds/receipts.py), the expiry
    waits: it is tried again a moment later."""
    flush()  # inside a batch: the bets it closes are those written
    with _kept_if_unchanged(), transaction.atomic():
        round = locked_round(round_id)
        if round is None or not step_key or round.step_key != step_key or is_halted(round):
            return []  # already answered, halted, or gone (a removed replay table)
        now = timezone.now()
        if round.deadline is not None and receipts.waiting_before(
            round.table_id, round.deadline, now
        ):
            timers.schedule(round.pk, step_key, now + timedelta(seconds=RECHECK_SECONDS))
            return []
        if round.deadline is not None:
            step = "betting" if round.phase == Round.Phase.BETTING else round.phase
            metrics.TIMER_LATENESS.labels(step).observe((now - round.deadline).total_seconds())
        with _restored_if_refused(round):
            if round.phase == Round.Phase.BETTING:
                return _close_bets(round)
            return _timed_out(round)


def _timed_out(round: Round) -> list[Notice]:
    """A step's timeout. Where the jurisdiction has abandoned hands played by basic strategy
    (payouts/maingame/abandoned.py), each unanswered play decision is the chart's, for the
    round's rules, logged as an automatic Decision; what is left (insurance, a bonus pick;
    everything, by default) gets the table's timeout action."""
    notices: list[Notice] = []
    chart = _abandoned_hands_chart(round)
    step = round.step_key
    while chart is not None and round.step_key == step:  # seat mode: a next seat has its timer
        engine = _locked_live(round).engine
        made = [abandoned.automatic_decision(engine, s, chart) for s in engine.prompted_stations]
        if not any(made):
            break
        for decision in made:
            if decision is not None:
                notices += _record(round, decision)
    if round.step_key == step and _locked_live(round).engine.prompted_stations:
        notices += _record(round, Timeout())
    return notices


def _abandoned_hands_chart(round: Round) -> abandoned.Chart | None:
    """The basic-strategy chart of the round's rules when its jurisdiction asks for it and the
    step is the players' (a par sheet computed once per rule set, then read from its cache;
    TABLEHUB_WARM_PARSHEETS computes it when a configuration is saved)."""
    if round.phase != Round.Phase.PLAY:
        return None
    rule = Jurisdiction.objects.filter(table__rounds=round).values_list("abandoned_hands")
    if rule.first() != (abandoned.BASIC_STRATEGY,):
        return None
    return abandoned.chart_for(round.config.ruleset())


def expire_if_late(round_id: int, at: datetime | None = None) -> list[Notice]:
    """Apply the current step's expiry when a command received ``at`` (now, if not given)
    came after its deadline (a timer may be late)."""
    round = _held(round_id) or Round.objects.only("deadline", "step_key").get(pk=round_id)
    if not past_deadline(round, at or timezone.now()):
        return []  # on time: the step is still open for it
    return expire(round_id, round.step_key)


def past_deadline(round: Round, at: datetime) -> bool:
    """Whether a command received ``at`` came after the round's timed step closed (by the
    row as read: ``expire_if_late`` reads it again before it acts)."""
    return bool(round.step_key) and round.deadline is not None and at > round.deadline


def bets_closed(round: Round) -> bool:
    """Whether the round's bets closed (its engine exists): a round cancelled while taking
    bets ends with a void record and no engine."""
    if round.phase == Round.Phase.BETTING or not round.last_seq:
        return False
    if round.phase != Round.Phase.VOID:
        return True
    if round.events.filter(kind=RoundEvent.Kind.BETS_CLOSED).exists():
        return True
    return any(row.kind == RoundEvent.Kind.BETS_CLOSED for row in _pending_rows(round.pk))


def is_halted(round: Round) -> bool:
    """True while a dispute of the round waits for a supervisor."""
    return round.step_key.startswith(HALTED)


# -- reading the engine ------------------------------------------------------------------------


def read(round_id: int, look: Callable[[Engine], T]) -> T:
    """``look(engine)`` on the round's engine as committed (or as this transaction has it,
    inside one), with no other thread changing it meanwhile. ``look`` must not keep the
    engine or change it; every change goes through the writer."""
    held = _held(round_id)
    if held is not None:
        seq = held.last_seq
    else:
        seq = Round.objects.values_list("last_seq", flat=True).get(pk=round_id)
    mine = _in_this_transaction(round_id, seq)
    if mine is not None:
        return look(mine.engine)
    live = _cached(round_id, seq)
    if live is None:
        round = Round.objects.select_related("table", "config").get(pk=round_id)
        live = _replayed(round, _log(round_id, up_to=seq))
        live.seq = seq
    try:
        return look(live.engine)
    finally:
        # Committed, or this transaction's own rows: the cache gets it when they are.
        transaction.on_commit(_PutBackOnCommit(live))


def load_engine(round_id: int) -> None:
    """Have the round's engine in this process's cache (replayed from its log if this
    process has none), so that its next input here does not wait for the replay: each
    server process does it when the round's bets close elsewhere (tablehub/fanout.py,
    ``on_round_ready``)."""
    read(round_id, lambda _engine: None)


def state(round_id: int) -> Engine:
    """A copy of the round's engine as it is now, for reading only."""
    return read(round_id, copy.deepcopy)


def publish(round: Round, notices: list[Notice]) -> None:
    """Tell the table ``notices`` about the round once this transaction commits (each
    carries the round's newest event id); nothing when it rolls back."""
    broadcast.publish_on_commit(round.table_id, round.pk, round.last_seq, notices)


def publish_news(round: Round, notices: list[Notice]) -> None:
    """Tell the table ``notices`` that no logged input of the round caused (the betting
    window restarted, the table closed or opened, a new shoe), once this transaction
    commits (tablehub.broadcast.publish_news_on_commit)."""
    broadcast.publish_news_on_commit(round.table_id, round.pk, round.last_seq, notices)


# -- records: what happened to a round that is not an input of the game ------------------------


def append_record(round: Round, kind: str, payload: dict[str, Any]) -> RoundEvent:
    """Append a record (a void, a dispute and its resolution, a correction, a discarded
    card) to the locked round; the caller saves the round. The engine does not change, so
    this transaction's engine stays current."""
    if kind not in RoundEvent.Kind.values or kind in ENGINE_KINDS:
        raise ValueError(f"{kind} is not a record")
    live = _in_this_transaction(round.pk, round.last_seq, disown=True)
    if live is None:
        live = _CACHE.take(round.pk, round.last_seq)
    row = _append(round, kind, payload)
    if live is not None:
        _own(live).seq = round.last_seq
    return row


def end_round(
    round: Round,
    phase: str,
    record: dict[str, Any],
    notice: Notice,
    then: Sequence[Notice] = (),
) -> None:
    """The locked round ends without a settlement (``phase`` VOID): its ``void`` record says
    who and why, no timer of its is acted on, and the table hears ``notice`` (then each
    station its own of ``then``). Saves the round."""
    append_record(round, RoundEvent.Kind.VOID, record)
    round.phase = phase
    round.step_key, round.deadline = "", None  # a pending timer finds nothing to expire
    round.save(update_fields=["last_seq", "phase", "step_key", "deadline"])
    publish(round, [notice, *then])


def halt(round: Round, payload: dict[str, Any], notice: Notice) -> RoundEvent:
    """A dispute halts the locked round: its record, no step and no deadline until a
    supervisor resolves it (``resume``). Saves the round."""
    row = append_record(round, RoundEvent.Kind.DISPUTE, payload)
    round.step_key = f"{HALTED}{row.seq}"
    round.deadline = None  # the step's timer stops; the resume starts a fresh one
    round.save(update_fields=["last_seq", "step_key", "deadline"])
    publish(round, [notice])
    return row


def resume(round: Round, payload: dict[str, Any], in_play: bool) -> None:
    """The locked round goes on after its dispute's resolution (``payload``, recorded): a
    round in play gets a fresh step time under a key of its own (the timer of the step
    before the halt, still on its way, then finds nothing to expire), and at a video table
    the shoe deals the wanted card again. Saves the round."""
    append_record(round, RoundEvent.Kind.DISPUTE_RESOLVED, payload)
    round.step_key, round.deadline = "", None
    if in_play:
        live = _locked_live(round)
        engine = live.engine
        if engine.awaits_answers and not engine.settled:
            key = f"{_step_key(engine, live.generation)}:r{round.last_seq}"
            _start_timer(round, key, engine.phase.value)
        if engine.awaiting_card is not None and round.table.mode == Table.Mode.VIDEO:
            _deal_by_itself(round)
    round.save(update_fields=["last_seq", "step_key", "deadline"])


def correct(
    round: Round, engine: Engine, payload: dict[str, Any], was_settled: bool
) -> tuple[RoundEvent, Live, list[Notice], int]:
    """Write a supervisor's correction of the locked round: ``engine`` is the round replayed
    with it (rounds/corrections.py checked it). Appends the record, brings the ledger to the
    corrected round, writes the phase and (for a settled round) its results again, and
    assigns In For 6 multipliers a corrected hard six now needs. Returns the record, the
    round's engine, the notices of those assignments and how many ledger movements it
    wrote. Saves the round; the caller times the next step (``time_step``) or halts it."""
    _CACHE.take(round.pk, round.last_seq)  # the uncorrected engine: obsolete
    row = _append(round, RoundEvent.Kind.CORRECTION, payload)
    live = _own(_live(round, engine, generation=row.seq))
    games = ledger.games(live.books) if was_settled else {}  # what the meters counted
    moved = ledger.bring_round_to(
        round, live.stations, _money_items(round, engine), live.books, row.seq
    )
    if was_settled or engine.settled:
        ledger.count_games(round, live.stations, games, ledger.games(live.books))
    round.phase = engine.phase.value
    if engine.settled:
        if was_settled:  # the results are written again; the window keeps its start
            Hand.objects.filter(round=round).delete()
            key = dealer_outcome_key(round)
            if key:
                cache.delete(key)  # the dealer's hand in the stations' histories
        else:
            round.settled_at = timezone.now()
            _open_next_round_on_commit(round)
        _write_results(round, engine, live.stations)
    round.save(update_fields=["last_seq", "phase", "settled_at"])
    live.seq = round.last_seq
    news: list[Notice] = []
    for station, box, multipliers in engine.awaiting_bonus:
        # a correction that makes an In For 6 hard six: multipliers, as record() does
        event = BonusAssigned(station, box, bonus.assign_multipliers(station, box, multipliers))
        news += engine.apply(event)
        _append(round, *dump_event(event))
        _write(round, live)
    return row, live, news, moved


def time_step(round: Round) -> None:
    """After a correction: the locked round's step gets a fresh step time (and a video
    table's shoe deals a wanted card). Saves the round."""
    live = _locked_live(round)
    _time_the_step(round, live.engine, live.generation)
    if live.engine.awaiting_card is not None and round.table.mode == Table.Mode.VIDEO:
        _deal_by_itself(round)
    round.save(update_fields=["step_key", "deadline"])


# -- inside the writer -------------------------------------------------------------------------


def _start_timer(round: Round, key: str, phase: str, seconds: float | None = None) -> None:
    """Give the step ``key`` its deadline (the table's timer for ``phase``, or ``seconds``)
    and fire it then; the caller saves the round."""
    round.step_key = key
    if seconds is None:
        seconds = timer_seconds(round, phase)
    round.deadline = timezone.now() + timedelta(seconds=seconds)
    timers.schedule(round.pk, key, round.deadline)


def _live(
    round: Round, engine: Engine, books: ledger.RoundBooks | None = None, generation: int = 0
) -> Live:
    stations = {s.name: s for s in round.table.stations.filter(name__in=list(engine.seats))}
    if books is None:
        books = ledger.round_books(round)
    return Live(round.pk, round.last_seq, engine, stations, books, generation)


def _money_items(
    round: Round, engine: Engine, station: str | None = None
) -> dict[ledger.ItemKey, Decimal]:
    """Every stake (negative) and return (positive) of the round so far, by ledger item: of
    every station, or of ``station`` alone."""
    names = engine.seats if station is None else [station]
    return {
        ledger.ItemKey(round.pk, name, item): amount
        for name in names
        for item, amount in engine.money_items(name).items()
    }


def _locked_live(round: Round) -> Live:
    """The engine of the locked round, owned by this transaction until it commits."""
    live = _in_this_transaction(round.pk, round.last_seq, disown=True)
    if live is None:
        live = _cached(round.pk, round.last_seq)
    if live is None:
        live = _replayed(round, _log(round.pk))
    return _own(live)


def _replayed(round: Round, rows: list[RoundEvent]) -> Live:
    """The round's engine from ``rows``, its log, replayed whole (and counted)."""
    live = _live(round, replay.rebuild(round, rows), generation=replay.generation(rows))
    metrics.ROUND_ENGINES.labels("replayed").inc()
    return live


def _cached(round_id: int, seq: int) -> Live | None:
    """This process's engine of the round at event ``seq``: the cached one, or one cached
    at an earlier event and brought up to ``seq`` with the events another server process
    wrote since (``replay.catch_up``). None when the cache holds neither, or a correction
    came between: the caller replays the whole log. With several processes serving one
    table their batches take turns on the round, and a whole replay per batch (the log, the
    table's stations, the books) made a decision cost twice as much as with one."""
    live = _CACHE.take(round_id, seq)
    if live is not None:
        return live
    live = _CACHE.take_older(round_id, seq)
    if live is None:
        return None
    rows = _log(round_id, up_to=seq, after=live.seq)
    if [row.seq for row in rows] != list(range(live.seq + 1, seq + 1)):
        return None  # the log is append-only, so a gap is not expected: replay it whole
    try:
        if not replay.catch_up(live.engine, rows):
            return None
    except EngineError:  # the log refuses what this engine was told: replay it whole
        log.warning("round %s: a cached engine could not catch up; replaying", round_id)
        return None
    # The other process wrote the stakes and returns of its events: the books as written.
    live.books, live.seq = ledger.round_books(round_id), seq
    metrics.ROUND_ENGINES.labels("caught_up").inc()
    return live


def _apply(round: Round, live: Live, event: Event) -> list[Notice]:
    notices = live.engine.apply(event)  # refuses before changing anything
    kind, payload = dump_event(event)
    _append(round, kind, payload)
    # A station's answer (or its In For 6 assignment) moves only its own money, unless it
    # ended the round: then the settlement moves everyone's. Reading only that station's
    # items keeps a decision's cost flat however many stations play. In seat mode a seat's
    # double or split also stakes the bets behind it that follow: everyone's is read.
    only = None
    if isinstance(event, (Decision, BonusAssigned)) and not live.engine.settled:
        only = event.station if live.engine.seating is None else None
    _write(round, live, only)
    _stamp_deadline(round, notices)
    publish(round, notices)
    if live.engine.settled:
        _open_next_round_on_commit(round)
    return notices


def _stamp_deadline(round: Round, notices: list[Notice]) -> None:
    """A prompt or a new step carries its step's absolute deadline (null: none), so that no
    station has to ask for it at the busiest moment."""
    deadline = round.deadline.isoformat() if round.deadline is not None else None
    for notice in notices:
        if notice.message.get("type") in TIMED_NOTICES:
            notice.message["deadline"] = deadline


def _open_next_round_on_commit(round: Round) -> None:
    if round.table.is_open:
        # The next round opens after the settlement is out, so that every station hears
        # the end of this round before the start of the next.
        table = round.table
        transaction.on_commit(lambda: open_round(table))


def _append(round: Round, kind: str, payload: dict[str, Any]) -> RoundEvent:
    held = _held(round.pk)
    assert held is None or held is round, "a batch's round written through another copy"
    round.last_seq += 1
    row = RoundEvent(
        round=round, seq=round.last_seq, kind=kind, payload=payload, created_at=timezone.now()
    )
    if held is not None:  # inserted with the batch's others (``flush``)
        transaction.on_commit(_PendingEvent(row))
        return row
    # The table's chain takes events in their order: none of a batch may be left behind.
    assert not _pending(), "an event of another round while a batch's wait to be inserted"
    chain.link_events(round.table_id, [row])  # its link in the table's chain, same transaction
    row.save(force_insert=True)
    return row


def _write(round: Round, live: Live, station: str | None = None) -> None:
    """Write what the event changed: ledger entries (of ``station`` alone, when only its
    money can have moved), the phase and timer, the results."""
    engine = live.engine
    # Inside a batch the entries wait, as its events do, and are written together (``flush``).
    ledger.post_round_items(
        round,
        live.stations,
        _money_items(round, engine, station),
        live.books,
        round.last_seq,
        wait=_held(round.pk) is round,
    )
    round.phase = engine.phase.value
    _time_the_step(round, engine, live.generation)
    if engine.awaiting_card is not None and round.table.mode == Table.Mode.VIDEO:
        _deal_by_itself(round)
    if engine.settled:
        round.settled_at = timezone.now()
        _write_results(round, engine, live.stations)
        ledger.count_games(round, live.stations, {}, ledger.games(live.books))  # the meters
    if _held(round.pk) is round:
        _HELD.unsaved = True  # saved once for the batch (``flush``)
    else:
        round.save(update_fields=list(_ROUND_STATE))
    live.seq = round.last_seq


def _step_key(engine: Engine, generation: int = 0) -> str:
    key = f"{engine.phase.value}:{engine.step}"
    return f"{key}:g{generation}" if generation else key


def _time_the_step(round: Round, engine: Engine, generation: int = 0) -> None:
    """A step with stations to answer gets a deadline; a new step, a new deadline. In seat
    mode a seat whose player left mid-round (``SeatLeft``) is answered at once: its step's
    deadline is now, and the timeout plays it by the abandoned-hands rule."""
    if not engine.awaits_answers:
        round.step_key, round.deadline = "", None
        return
    key = _step_key(engine, generation)
    if engine.left and set(engine.prompted_stations) <= engine.left:
        if key != round.step_key or round.deadline is None or round.deadline > timezone.now():
            _start_timer(round, key, engine.phase.value, seconds=0)
        return
    if key == round.step_key or round.step_key.startswith(key + ":r"):
        return  # the same step (":r<seq>": its timer started again after a dispute)
    _start_timer(round, key, engine.phase.value)


def _deal_by_itself(round: Round) -> None:
    """A video table has no dealer: its virtual shoe deals the wanted card in a moment."""
    seconds = float(round.config.timers.get("video_card", VIDEO_CARD_SECONDS))
    timers.schedule_video_card(
        round.pk, round.last_seq, timezone.now() + timedelta(seconds=seconds)
    )


def _write_results(round: Round, engine: Engine, stations: dict[str, Station]) -> None:
    """The settled round's Hand rows, and each special bet's combination and return on its
    Bet row."""
    hands: list[dict[str, Any]] = []
    specials: dict[tuple[int, int, str], SpecialBet] = {}  # (station id, box, code)
    for name, seat in engine.seats.items():
        for position, hand in enumerate(seat.hands):
            assert hand.result is not None  # the round is settled: every hand has its result
            hands.append(
                {
                    "round_id": round.pk,
                    "station_id": stations[name].pk,
                    "box": hand.box,
                    "position": position,
                    "cards": [str(c) for c in hand.cards],
                    "stake": hand.stake,
                    "result": hand.result,
                    "returned": hand.returned,
                    "insurance": hand.insurance,
                    "insurance_returned": hand.insurance_returned if hand.insurance else None,
                }
            )
        for special in seat.specials:
            specials[(stations[name].pk, special.box, special.code)] = special
    insert_values(Hand, hands)
    # The special bets' rows updated by outcome, one UPDATE for all the bets with the same
    # combination and return (a few a round): an UPDATE each cost a settlement of 1000
    # stations with a special bet each about 0.8 s, Django's bulk_update more (its CASE
    # expressions), docs/benchmarks.md.
    outcomes: dict[tuple[str, Decimal], list[int]] = {}
    placed = Bet.objects.filter(round=round, code__in={code for _s, _b, code in specials})
    for pk, station_id, box, code in placed.values_list("pk", "station_id", "box", "code"):
        settled = specials.get((station_id, box, code))
        if settled is not None:
            outcome = (settled.combination or "", settled.returned)
            outcomes.setdefault(outcome, []).append(pk)
    for (combination, returned), pks in outcomes.items():
        Bet.objects.filter(pk__in=pks).update(combination=combination, returned=returned)
