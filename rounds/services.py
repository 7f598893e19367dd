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

from dataclasses import dataclass
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
# RoundEvent kinds that record what happened to the round (who voided it and why) without
# being an input of the game: replaying the round skips them.
RECORDS_ONLY = frozenset({"void"})
VIDEO_CARD_SECONDS = 0.8  # a video table deals each card this long after it is wanted


@dataclass
class Live:
    """A round as this process knows it: the engine, the seated stations and the ledger keys
    already written. Valid for one ``last_seq``; only used under the round's row lock."""

    seq: int
    engine: Engine
    stations: dict[str, Station]
    written: set[str]


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


def record(round_id: int, event: Event) -> list[Notice]:
    """Apply one input to the round; return what each party may now see. An input that
    arrives after the step's deadline first applies the step's timeout."""
    # The expiry stands on its own: it is committed even if the late command is refused.
    notices = [] if isinstance(event, Timeout) else expire_if_late(round_id)
    try:
        with transaction.atomic():
            round = Round.objects.select_for_update().get(pk=round_id)
            live = _current(round)
            notices += _apply(round, live, event)
            for station, box, multipliers in live.engine.awaiting_bonus:
                # In For 6: the server assigns the hidden multipliers before anyone picks.
                order = bonus.assign_multipliers(station, box, multipliers)
                notices += _apply(round, live, BonusAssigned(station, box, order))
            return notices
    except Exception:
        _ENGINES.pop(round_id, None)  # the engine may be ahead of what was committed
        raise


def expire(round_id: int, step_key: str) -> list[Notice]:
    """A step's deadline has passed: close bets, or time out every open question.
    Idempotent: nothing happens when the round is no longer at that step."""
    with transaction.atomic():
        round = Round.objects.select_for_update().filter(pk=round_id).first()
        if round is None or not step_key or round.step_key != step_key:
            return []  # already answered, or the round is gone (a removed replay table)
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
    """The engine state replayed from the round's RoundEvent rows alone."""
    events = list(round.events.order_by("seq"))
    if not events or events[0].kind != "bets_closed":
        raise EngineError("the round has no closed bets to replay", code="invalid")
    engine = _new_engine(round, events[0].payload)
    for row in events[1:]:
        if row.kind in RECORDS_ONLY:
            continue
        engine.apply(load_event(row.kind, row.payload))
    return engine


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
        config.limit("special"),
    )


def _live(round: Round, engine: Engine, written: set[str] | None = None) -> Live:
    stations = {s.name: s for s in round.table.stations.filter(name__in=list(engine.seats))}
    if written is None:
        written = set(LedgerEntry.objects.filter(round=round).values_list("key", flat=True))
    return Live(round.last_seq, engine, stations, written)


def _current(round: Round) -> Live:
    live = _ENGINES.get(round.pk)
    if live is not None and live.seq == round.last_seq:
        return live
    return _live(round, rebuild(round))


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


def _append(round: Round, kind: str, payload: dict[str, Any]) -> None:
    round.last_seq += 1
    RoundEvent.objects.create(round=round, seq=round.last_seq, kind=kind, payload=payload)


def _after(round: Round, live: Live) -> None:
    """Write what the event changed: ledger entries, the phase and timer, the results."""
    engine = live.engine
    movements = []
    for name in engine.seats:
        for item, amount in engine.money_items(name).items():
            key = f"round:{round.pk}:{name}:{item}"
            if key not in live.written:
                kind = LedgerEntry.Kind.STAKE if amount < 0 else LedgerEntry.Kind.RETURN
                movements.append((live.stations[name], kind, amount, key))
    ledger.post_many(round, movements)
    live.written.update(key for *_, key in movements)
    round.phase = engine.phase.value
    _time_the_step(round, engine)
    if engine.awaiting_card is not None and round.table.mode == Table.Mode.VIDEO:
        _deal_by_itself(round)
    if engine.settled:
        round.settled_at = timezone.now()
        _write_results(round, engine, live.stations)
    round.save(update_fields=["last_seq", "phase", "settled_at", "step_key", "deadline"])
    live.seq = round.last_seq
    _ENGINES[round.pk] = live


def _time_the_step(round: Round, engine: Engine) -> None:
    """A step with stations to answer gets a deadline; a new step, a new deadline."""
    if not engine.prompted_stations:
        round.step_key, round.deadline = "", None
        return
    key = f"{engine.phase.value}:{engine.step}"
    if key == round.step_key:
        return
    _start_timer(round, key, engine.phase.value)


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
