"""Round services: open a round, take bets, close them, and apply every later input.

Every input goes through ``record``: in one transaction it locks the round row,
applies the event to the rules engine (rebuilt from the round's RoundEvent rows,
or taken from this process's cache when that is current), appends the event to
the log, writes the ledger entries the event caused, times the next step and,
once the round is settled, writes the Hand and Bet results. A refused event
raises EngineError and writes nothing.

Timers are data (DESIGN.md, principle 4): each step that waits for stations has
a key and a deadline on the round; ``expire`` applies the step's timeout only if
the round is still at that step, and a command arriving after the deadline first
applies the expiry itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from payouts import ledger
from payouts.models import LedgerEntry
from payouts.specials import bonus
from rounds import timers
from rounds.engine import Bet as EngineBet
from rounds.engine import EngineError, Notice, Timeout
from rounds.engine import Round as Engine
from rounds.engine.codec import dump_event, load_event
from rounds.engine.round import BonusAssigned, Event
from rounds.models import Bet, Hand, Round, RoundEvent
from stations.models import Station
from tablehub import broadcast
from tablehub.models import Table

DEFAULT_TIMER_SECONDS = 15
# RoundEvent kinds that record what happened to the round without being an input of the
# game: who voided it and why, a station's dispute and its resolution, a supervisor's
# correction of cards already logged (rounds/corrections.py: replaying the round applies it
# to the card events it names) and a card that left the shoe unused. Replaying skips them.
DISPUTE_KIND = "dispute"
RESOLVED_KIND = "dispute_resolved"
CORRECTION_KIND = "correction"
DISCARD_KIND = "discard"
RECORDS_ONLY = frozenset({"void", DISPUTE_KIND, RESOLVED_KIND, CORRECTION_KIND, DISCARD_KIND})
# A round halted by a dispute has the step key "halted:<seq of the dispute>" and no deadline:
# no input is accepted and a timer of the step before finds nothing to expire (disputes.py).
HALTED = "halted:"
# Ledger keys after a correction (rounds/corrections.py): an entry taken back is reversed by
# "<its key>:corrected"; an item written again gets "<the item's key>:c<seq>".
CORRECTED = ":corrected"
_REWRITTEN = re.compile(r"^(?P<item>.+):c\d+$")
VIDEO_CARD_SECONDS = 0.8  # a video table deals each card this long after it is wanted


@dataclass
class Live:
    """A round as this process knows it: the engine, the seated stations and the ledger keys
    already written. Valid for one ``last_seq``; only used under the round's row lock."""

    seq: int
    engine: Engine
    stations: dict[str, Station]
    written: set[str]  # the money items in the ledger now (their first keys)
    gone: set[str] = field(default_factory=set)  # items a correction took back: key taken
    generation: int = 0  # the round's last correction (``generation``): part of step keys


# round id -> Live; a round whose last_seq moved on (another process wrote) is rebuilt.
_ENGINES: dict[int, Live] = {}


def open_round(table: Table) -> Round:
    """Open bets for a new round under the table's current configuration; the betting
    timer starts now."""
    with transaction.atomic():  # the timer starts once the round is saved
        round = Round.objects.create(table=table, config=table.current_config())
        _start_timer(round, "betting", "betting")
        round.save(update_fields=["step_key", "deadline"])
        # Every station and tablet learns that bets are open, whoever opened the round.
        opened = Notice(
            "public",
            {"type": "phase", "phase": "betting", "deadline": round.deadline.isoformat()},
        )
        broadcast.publish_on_commit(table.pk, round.pk, 0, [opened])
    return round


def _restart_betting(round: Round) -> None:
    """A new betting window with a key of its own, so that a stale timer cannot close it."""
    windows = int(round.step_key.partition(":")[2] or 0) + 1
    _start_timer(round, f"betting:{windows}", "betting")
    round.save(update_fields=["step_key", "deadline"])


def _start_timer(round: Round, key: str, phase: str) -> None:
    """Give the step ``key`` its deadline (the table's timer for ``phase``) and fire it then;
    the caller saves the round."""
    round.step_key = key
    round.deadline = timezone.now() + timedelta(seconds=timer_seconds(round, phase))
    timers.schedule(round.pk, key, round.deadline)


def timer_seconds(round: Round, phase: str) -> float:
    """The table's timer for a step, never longer than the jurisdiction allows."""
    timers_config = round.config.timers
    seconds = timers_config.get(phase, timers_config.get("decision", DEFAULT_TIMER_SECONDS))
    return min(float(seconds), float(round.table.jurisdiction.max_decision_seconds))


def place_bet(round_id: int, station: Station, box: int, code: str, stake: Decimal) -> Bet:
    """Set a station's stake on one spot while bets are open (the station protocol builds
    undo, clear, rebet and the rest on this). The round row is locked, so a bet racing the
    close of bets is either in before it or refused; so is a bet after the betting deadline."""
    expire_if_late(round_id)
    with transaction.atomic():
        round = Round.objects.select_for_update().get(pk=round_id)
        if round.phase != Round.Phase.BETTING:
            raise EngineError("bets are closed", station.name, box, code="bets_closed")
        bet, _ = Bet.objects.update_or_create(
            round=round, station=station, box=box, code=code, defaults={"stake": stake}
        )
        return bet


def close_bets(round_id: int) -> list[Notice]:
    """Close bets: build the engine round, take every stake through the ledger."""
    with transaction.atomic():
        round = Round.objects.select_for_update().get(pk=round_id)
        if round.phase != Round.Phase.BETTING:
            raise EngineError("bets are already closed", code="bets_closed")
        bets = list(round.bets.select_related("station").order_by("station__name", "box", "pk"))
        if not bets:  # nobody bet: keep betting open for another betting time
            _restart_betting(round)
            return []
        credits = {b.station.name: ledger.balance(b.station) for b in bets}
        payload = {
            "bets": [[b.station.name, b.box, b.code, str(b.stake)] for b in bets],
            "credits": {name: str(amount) for name, amount in credits.items()},
        }
        live = _live(round, _new_engine(round, payload), written=set())
        _append(round, "bets_closed", payload)
        _after(round, live)
        notices = [live.engine.dealer_prompt()]  # "deal box 1"
        broadcast.publish_on_commit(round.table_id, round.pk, round.last_seq, notices)
        return notices


@contextmanager
def round_transaction(round_id: int) -> Iterator[None]:
    """A transaction that changes round ``round_id``. When it fails, this process's engine
    for the round is dropped: it may be ahead of what was committed, and the next use
    rebuilds it from the event log."""
    try:
        with transaction.atomic():
            yield
    except Exception:
        _ENGINES.pop(round_id, None)
        raise


def record(round_id: int, event: Event) -> list[Notice]:
    """Apply one input to the round; return what each party may now see. An input that
    arrives after the step's deadline first applies the step's timeout."""
    # The expiry stands on its own: it is committed even if the late command is refused.
    notices = [] if isinstance(event, Timeout) else expire_if_late(round_id)
    with round_transaction(round_id):
        round = Round.objects.select_for_update().get(pk=round_id)
        if is_halted(round):
            raise EngineError(
                f"round {round.pk} is halted by a dispute: wait for the supervisor",
                code="round_halted",
            )
        live = _current(round)
        notices += _apply(round, live, event)
        for station, box, multipliers in live.engine.awaiting_bonus:
            # In For 6: the server assigns the hidden multipliers before anyone picks.
            order = bonus.assign_multipliers(station, box, multipliers)
            notices += _apply(round, live, BonusAssigned(station, box, order))
        return notices


def expire(round_id: int, step_key: str) -> list[Notice]:
    """A step's deadline has passed: close bets, or time out every open question.
    Idempotent: nothing happens when the round is no longer at that step."""
    with transaction.atomic():
        round = Round.objects.select_for_update().filter(pk=round_id).first()
        if round is None or not step_key or round.step_key != step_key or is_halted(round):
            return []  # already answered, halted, or gone (a removed replay table)
        if round.phase == Round.Phase.BETTING:
            return close_bets(round_id)
        return record(round_id, Timeout())


def expire_if_late(round_id: int) -> list[Notice]:
    """Apply the current step's expiry when its deadline has passed (a timer may be late)."""
    round = Round.objects.only("deadline", "step_key").get(pk=round_id)
    if round.deadline is None or not round.step_key or timezone.now() < round.deadline:
        return []
    return expire(round_id, round.step_key)


def state(round_id: int) -> Engine:
    """The round's engine as it is now, for reading only (every change goes through ``record``)."""
    round = Round.objects.get(pk=round_id)
    return _current(round).engine


def rebuild(round: Round) -> Engine:
    """The engine state replayed from the round's RoundEvent rows alone (with every
    correction applied)."""
    return _replay(round, list(round.events.order_by("seq")))


def _replay(round: Round, events: list[RoundEvent]) -> Engine:
    if not events or events[0].kind != "bets_closed":
        raise EngineError("the round has no closed bets to replay", code="invalid")
    engine = _new_engine(round, events[0].payload)
    for _row, event in engine_events(events):
        engine.apply(event)
    return engine


def generation(events: list[RoundEvent]) -> int:
    """The seq of the round's last correction (0: none). A correction may take the round back
    to a step it has been at: the steps after it are timed under keys of their own."""
    return max((row.seq for row in events if row.kind == CORRECTION_KIND), default=0)


def is_halted(round: Round) -> bool:
    """True while a dispute of the round waits for a supervisor."""
    return round.step_key.startswith(HALTED)


def corrections_of(rows: list[RoundEvent]) -> dict[int, str | None]:
    """seq of a card (or burn) event -> the card it is corrected to, None when the card was
    taken out of play; the newest correction of an event counts."""
    fixes: dict[int, str | None] = {}
    for row in rows:
        if row.kind == CORRECTION_KIND:
            for change in row.payload.get("changes", []):
                fixes[change["seq"]] = change.get("card")
    return fixes


def engine_events(
    rows: list[RoundEvent], fixes: dict[int, str | None] | None = None
) -> Iterator[tuple[RoundEvent, Event]]:
    """The round's inputs after bets closed, in order, as engine events: records skipped,
    each corrected card replaced and each card taken out of play left out (``fixes``:
    those of the rows themselves unless given)."""
    if fixes is None:
        fixes = corrections_of(rows)
    for row in rows:
        if row.kind == "bets_closed" or row.kind in RECORDS_ONLY:
            continue
        payload = row.payload
        if row.seq in fixes:
            if fixes[row.seq] is None:
                continue
            payload = {**payload, "card": fixes[row.seq]}
        yield row, load_event(row.kind, payload)


def ledger_item(key: str) -> str:
    """The money item a round's ledger key belongs to: the key ``_after`` first gave it."""
    if key.endswith(CORRECTED):
        key = key[: -len(CORRECTED)]
    rewritten = _REWRITTEN.match(key)
    return rewritten["item"] if rewritten else key


def _posted(keys: set[str]) -> tuple[set[str], set[str]]:
    """From a round's ledger keys: the items in the ledger now, and the items whose own key
    is taken by an entry a correction took back."""
    if not any(k.endswith(CORRECTED) for k in keys):
        return keys, set()  # never corrected: every key is its item's
    entries = {k for k in keys if "|" not in k and not k.endswith(CORRECTED)}  # no house side
    now = {ledger_item(k) for k in entries if k + CORRECTED not in keys}
    return now, {k for k in entries if ledger_item(k) == k} - now


def _new_engine(round: Round, payload: dict[str, Any]) -> Engine:
    config = round.config
    bets = [EngineBet(s, box, code, Decimal(stake)) for s, box, code, stake in payload["bets"]]
    credits = {name: Decimal(amount) for name, amount in payload["credits"].items()}
    return Engine(
        config.ruleset(),
        bets,
        credits,
        round.table.boxes,
        config.paytables(),
        config.special_limits(),
    )


def _live(
    round: Round, engine: Engine, written: set[str] | None = None, generation: int = 0
) -> Live:
    stations = {s.name: s for s in round.table.stations.filter(name__in=list(engine.seats))}
    gone: set[str] = set()
    if written is None:
        keys = set(LedgerEntry.objects.filter(round=round).values_list("key", flat=True))
        written, gone = _posted(keys)
    return Live(round.last_seq, engine, stations, written, gone, generation)


def _current(round: Round) -> Live:
    live = _ENGINES.get(round.pk)
    if live is not None and live.seq == round.last_seq:
        return live
    events = list(round.events.order_by("seq"))
    return _live(round, _replay(round, events), generation=generation(events))


def _apply(round: Round, live: Live, event: Event) -> list[Notice]:
    notices = live.engine.apply(event)  # refuses before changing anything
    kind, payload = dump_event(event)
    _append(round, kind, payload)
    _after(round, live)
    broadcast.publish_on_commit(round.table_id, round.pk, round.last_seq, notices)
    if live.engine.settled and round.table.is_open:
        # The next round opens after the settlement is out, so that every station hears
        # the end of this round before the start of the next.
        transaction.on_commit(lambda: open_round(round.table))
    return notices


def _append(round: Round, kind: str, payload: dict[str, Any]) -> RoundEvent:
    round.last_seq += 1
    return RoundEvent.objects.create(round=round, seq=round.last_seq, kind=kind, payload=payload)


def _after(round: Round, live: Live) -> None:
    """Write what the event changed: ledger entries, the phase and timer, the results."""
    engine = live.engine
    movements = []
    items = []
    for name in engine.seats:
        for item, amount in engine.money_items(name).items():
            key = f"round:{round.pk}:{name}:{item}"
            if key not in live.written:
                kind = LedgerEntry.Kind.STAKE if amount < 0 else LedgerEntry.Kind.RETURN
                # an item a correction took back has its key taken: written again under a new
                entry_key = f"{key}:c{round.last_seq}" if key in live.gone else key
                movements.append((live.stations[name], kind, amount, entry_key))
                items.append(key)
    ledger.post_many(round, movements)
    live.written.update(items)
    live.gone.difference_update(items)
    round.phase = engine.phase.value
    _time_the_step(round, engine, live.generation)
    if engine.awaiting_card is not None and round.table.mode == Table.Mode.VIDEO:
        _deal_by_itself(round)
    if engine.settled:
        round.settled_at = timezone.now()
        _write_results(round, engine, live.stations)
    round.save(update_fields=["last_seq", "phase", "settled_at", "step_key", "deadline"])
    live.seq = round.last_seq
    _ENGINES[round.pk] = live


def _step_key(engine: Engine, generation: int = 0) -> str:
    key = f"{engine.phase.value}:{engine.step}"
    return f"{key}:g{generation}" if generation else key


def _time_the_step(round: Round, engine: Engine, generation: int = 0) -> None:
    """A step with stations to answer gets a deadline; a new step, a new deadline."""
    if not engine.prompted_stations:
        round.step_key, round.deadline = "", None
        return
    key = _step_key(engine, generation)
    if key == round.step_key or round.step_key.startswith(key + ":r"):
        return  # the same step (":r<seq>": its timer started again after a dispute)
    _start_timer(round, key, engine.phase.value)


def restart_timer(round: Round, live: Live) -> None:
    """After a halt: the step goes on with a fresh step time under a key of its own (the
    timer of the step before the halt, still on its way, then finds nothing to expire);
    at a video table the shoe deals the wanted card again. The caller saves the round."""
    engine = live.engine
    round.step_key, round.deadline = "", None
    if engine.prompted_stations and not engine.settled:
        key = f"{_step_key(engine, live.generation)}:r{round.last_seq}"
        _start_timer(round, key, engine.phase.value)
    if engine.awaiting_card is not None and round.table.mode == Table.Mode.VIDEO:
        _deal_by_itself(round)


def append_record(round: Round, kind: str, payload: dict[str, Any]) -> RoundEvent:
    """Append a RoundEvent that is not an engine input (RECORDS_ONLY) and keep this
    process's engine current; the caller saves the round."""
    if kind not in RECORDS_ONLY:
        raise ValueError(f"{kind} is an engine event")
    live = _ENGINES.get(round.pk)
    current = live is not None and live.seq == round.last_seq
    row = _append(round, kind, payload)
    if current:
        live.seq = round.last_seq
    else:
        _ENGINES.pop(round.pk, None)
    return row


def _deal_by_itself(round: Round) -> None:
    """A video table has no dealer: its virtual shoe deals the wanted card in a moment."""
    seconds = float(round.config.timers.get("video_card", VIDEO_CARD_SECONDS))
    timers.schedule_video_card(
        round.pk, round.last_seq, timezone.now() + timedelta(seconds=seconds)
    )


def _write_results(round: Round, engine: Engine, stations: dict[str, Station]) -> None:
    hands = []
    for name, seat in engine.seats.items():
        for position, hand in enumerate(seat.hands):
            hands.append(
                Hand(
                    round=round,
                    station=stations[name],
                    box=hand.box,
                    position=position,
                    cards=[str(c) for c in hand.cards],
                    stake=hand.stake,
                    result=hand.result,
                    returned=hand.returned,
                    insurance=hand.insurance,
                    insurance_returned=hand.insurance_returned if hand.insurance else None,
                )
            )
        for special in seat.specials:
            Bet.objects.filter(
                round=round, station=stations[name], box=special.box, code=special.code
            ).update(combination=special.combination or "", returned=special.returned)
    Hand.objects.bulk_create(hands)
