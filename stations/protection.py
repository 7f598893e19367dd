"""Player protection at a station: the player's session, its figures and its limits.

A session starts with the station's first cash-in after a cash-out (or its first cash-in
ever) and ends with its cash-out (``PlayerSession``). Its money is the ledger's, counted
from the entry of the cash-in that opened it (``ledger.sessions_money``): this module reads
it and never writes money. The player may set a loss limit, a time limit and a most staked
per round for the session: a decrease (or a first limit) applies at once, an increase or a
removal not this session (``limit_cool_off``). The jurisdiction's maxima (stake per round,
session length) apply whatever the player set. Reaching a limit stops new bets (a change
that adds to the stakes); taking bets back is always possible, and a round in progress ends
normally. Where the jurisdiction sets an interval, a reality check is due after each
interval of the session; it is shown only between rounds (never while the station has bets
on a round that is not settled: it waits for the settlement, and the round's timers are not
touched), and until the player answers it (``continue``, ``history`` or ``cash_out``) no new
bet is taken (``reality_check_pending``). A player may take a break: the station cashes out
and refuses cash-ins and bets until the break ends (``on_break``). Where the jurisdiction
sets an idle time, a station with credits and no bet for that long asks whether the player
is there, and a minute later locks betting (``inactivity_locked``; the credits stay) until the
player answers. Every protection event is logged (``ProtectionEvent``) for recall, the audit
and the reports.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import DateTimeField, Q
from django.utils import timezone

from payouts import ledger
from rounds.engine import EngineError
from rounds.engine.money import fmt
from rounds.models import Bet, Round, RoundEvent
from stations.models import PlayerSession, ProtectionEvent, Station, StationBreak
from tablehub.compiled import CompiledQuery, Param
from tablehub.models import Jurisdiction

log = logging.getLogger("tablehub.protection")

# The limits a player may set: the field of set_limits and of the state's ``limits``.
LIMITS = ("loss_limit", "stake_limit", "time_limit")
_FIELDS = {
    "loss_limit": "loss_limit",
    "stake_limit": "stake_limit",
    "time_limit": "time_limit_minutes",
}


class LimitReached(EngineError):
    """A bet refused by a limit (the player's or the jurisdiction's); logged by
    ``log_reached`` once the refused change is undone."""


# -- the session ---------------------------------------------------------------------------


def current_session(station: Station) -> PlayerSession | None:
    return PlayerSession.objects.filter(station=station, closed_at__isnull=True).first()


def open_session(station: Station, client_key: str) -> PlayerSession | None:
    """After a cash-in credited under ``client_key``: open the station's session if none is
    open (the cash-in is its first entry). The caller holds the station's row lock, so two
    cash-ins at once open one session."""
    if current_session(station) is not None:
        return None
    first = ledger.cash_in_entry(station, client_key)
    if first is None:
        return None
    session = PlayerSession.objects.create(station=station, first_entry=first)
    _log(station, session, ProtectionEvent.Kind.SESSION_STARTED, {})
    return session


def close_session(station: Station) -> None:
    """At the cash-out: the station's session ends, with its figures logged."""
    session = current_session(station)
    if session is None:
        return
    figures = _figures(station, session)
    session.closed_at = timezone.now()
    session.save(update_fields=["closed_at"])
    _log(station, session, ProtectionEvent.Kind.SESSION_ENDED, figures)


def _money_of(station: Station, session: PlayerSession) -> ledger.SessionMoney:
    return ledger.sessions_money({station.pk: session.first_entry})[station.pk]


def _figures(station: Station, session: PlayerSession) -> dict[str, Any]:
    money = _money_of(station, session)
    seconds = int((timezone.now() - session.opened_at).total_seconds())
    return {
        "seconds": seconds,
        "cash_in": fmt(money.cash_in),
        "staked": fmt(money.staked),
        "won": fmt(money.won),
        "net": fmt(money.net),
    }


@dataclass(frozen=True)
class Maxima:
    """The jurisdiction's most staked per round, longest session and reality-check interval
    (None: off)."""

    stake: Decimal | None
    minutes: int | None
    check_minutes: int | None
    idle_minutes: int | None


def recall_games(station: Station) -> int:
    """How many of its last games a station recalls: the jurisdiction's number."""
    games = Jurisdiction.objects.filter(table__stations=station).values_list("recall_games")
    return (games.first() or (10,))[0]


# The hot reads of a batch's standings (tablehub/compiled.py: their SQL built once).
_MAXIMA = CompiledQuery(
    lambda: (
        Jurisdiction.objects.filter(table__stations=Param("station_id"))
        .values_list(
            "max_stake_per_round", "max_session_minutes", "reality_check_minutes", "idle_minutes"
        )
        .order_by("pk")[:1]
    )
)
_OPEN_SESSIONS = CompiledQuery(
    lambda: PlayerSession.objects.filter(station_id__among=Param("ids"), closed_at__isnull=True)
)
_BREAKS_TO_SHOW = CompiledQuery(  # going on, or ended but not yet logged as ended
    lambda: (
        StationBreak.objects.filter(station_id__among=Param("ids"))
        .filter(Q(until__gt=Param("now", DateTimeField())) | Q(end_logged=False))
        .order_by("pk")
    )
)


def maxima(station: Station) -> Maxima:
    return Maxima(*(_MAXIMA.first(station_id=station.pk) or (None, None, None, None)))


@dataclass(frozen=True)
class Standing:
    """What a station's protection is judged on: the jurisdiction's maxima, the open session
    and its money (None: no session), the break going on (None: none) and its credits."""

    most: Maxima
    session: PlayerSession | None
    money: ledger.SessionMoney | None
    taken: StationBreak | None
    credits: Decimal
    # When its money last moved (None: never, or the jurisdiction has no idle time, which
    # is all it is read for).
    last_entry: datetime | None = None


def standings(stations: Sequence[Station]) -> dict[int, Standing]:
    """Each station's ``Standing``, by station id: five queries for any number of stations
    of one table, six where the jurisdiction has an idle time (a batch's checks and replies
    read them together; one station's reads cost more in query building than in the
    database)."""
    if not stations:
        return {}
    most = maxima(stations[0])  # one table, one jurisdiction
    sessions = {
        session.station_id: session
        for session in _OPEN_SESSIONS.list(ids=[station.pk for station in stations])
    }
    moneys = ledger.sessions_money(
        {station_id: session.first_entry for station_id, session in sessions.items()}
    )
    breaks = _current_breaks(stations)
    credits = ledger.balances(station.pk for station in stations)
    moved: dict[int, datetime | None] = (
        {} if most.idle_minutes is None else ledger.last_entries_at(sessions)
    )
    return {
        station.pk: Standing(
            most,
            sessions.get(station.pk),
            moneys.get(station.pk),
            breaks.get(station.pk),
            credits[station.pk],
            moved.get(station.pk),
        )
        for station in stations
    }


def shown(station: Station, standing: Standing) -> dict[str, Any]:
    """The ``session`` (docs/protocol.md, "Session"; None with no session open) and the
    ``break`` (None: none) of the station's state, from its standing."""
    session, money = standing.session, standing.money
    return {
        "session": None
        if session is None or money is None
        else _session_state(station, session, money, standing),
        "break": _break_shown(standing.taken),
    }


class _KeptReads(threading.local):
    """A batch's standings, read once for the bets it checks (``reads_kept``)."""

    stations: dict[int, Station] | None = None
    kept: dict[int, Standing] | None = None


_KEPT = _KeptReads()


@contextmanager
def reads_kept(stations: Sequence[Station]) -> Iterator[None]:
    """Inside, ``check_stakes`` reads the standings of all ``stations`` once, together, the
    first time one is needed, until ``forget_reads``: the caller forgets them before any
    command that may change one (a bet changes none)."""
    _KEPT.stations, _KEPT.kept = {station.pk: station for station in stations}, None
    try:
        yield
    finally:
        _KEPT.stations = _KEPT.kept = None


def forget_reads() -> None:
    _KEPT.kept = None


def standing(station: Station) -> Standing:
    """The station's ``Standing``: inside ``reads_kept``, as read for its batch (under the
    station's lock when the caller locked it before the batch's first read)."""
    if _KEPT.stations is None or station.pk not in _KEPT.stations:
        return standings([station])[station.pk]
    if _KEPT.kept is None:
        _KEPT.kept = standings(list(_KEPT.stations.values()))
    return _KEPT.kept[station.pk]


def current_standings(stations: Sequence[Station]) -> dict[int, Standing]:
    """``standings`` of ``stations``: inside ``reads_kept``, those read for the batch's bets
    when the batch still holds them (only bets since, which change none), else read now."""
    kept = _KEPT.kept
    if kept is not None and all(station.pk in kept for station in stations):
        return {station.pk: kept[station.pk] for station in stations}
    return standings(stations)


def _session_state(
    station: Station, session: PlayerSession, money: ledger.SessionMoney, standing: Standing
) -> dict[str, Any]:
    most = standing.most
    return {
        "started_at": session.opened_at.isoformat(),
        "cash_in": fmt(money.cash_in),
        "staked": fmt(money.staked),
        "won": fmt(money.won),
        "net": fmt(money.net),
        "limits": {
            "loss_limit": _shown(session.loss_limit),
            "stake_limit": _shown(session.stake_limit),
            "time_limit": session.time_limit_minutes,
        },
        "maxima": {"stake_limit": _shown(most.stake), "time_limit": most.minutes},
        "stopped": _stopped(session, money, most),
        "reality_check": _reality_check(station, session, most),
        "inactivity": _inactivity(station, session, most, money, standing.last_entry),
    }


def _shown(amount: Decimal | None) -> str | None:
    return None if amount is None else fmt(amount)


def _minutes(session: PlayerSession, most: Maxima) -> int | None:
    """The session's length limit: the player's or the jurisdiction's, whichever is less."""
    limits = [m for m in (session.time_limit_minutes, most.minutes) if m is not None]
    return min(limits) if limits else None


def _stopped(session: PlayerSession, money: ledger.SessionMoney, most: Maxima) -> str | None:
    """Why the session may place no new bet (a refusal's code), or None."""
    minutes = _minutes(session, most)
    if minutes is not None and timezone.now() >= session.opened_at + timedelta(minutes=minutes):
        return "time_limit_reached"
    if session.loss_limit is not None and -money.net >= session.loss_limit:
        return "loss_limit_reached"
    return None


# -- the reality check ---------------------------------------------------------------------


def _check_due(session: PlayerSession, most: Maxima) -> datetime | None:
    """When the session's next reality check is due (None: the jurisdiction has none)."""
    if most.check_minutes is None:
        return None
    return session.next_check_at or session.opened_at + timedelta(minutes=most.check_minutes)


def in_a_round(station: Station) -> bool:
    """Whether the station has bets on a round not yet settled (or void)."""
    ended = [Round.Phase.SETTLED, Round.Phase.VOID]
    return Bet.objects.filter(station=station).exclude(round__phase__in=ended).exists()


def _check_open(station: Station, session: PlayerSession, most: Maxima) -> bool:
    """Whether a reality check is due and may be shown: between the station's rounds."""
    due = _check_due(session, most)
    return due is not None and timezone.now() >= due and not in_a_round(station)


def _reality_check(station: Station, session: PlayerSession, most: Maxima) -> dict[str, Any] | None:
    """The state's ``session.reality_check``; the first state that shows a check logs it."""
    due = _check_due(session, most)
    if due is None:
        return None
    shown = _check_open(station, session, most)
    if shown and session.check_shown_at is None:
        now = timezone.now()
        unshown = PlayerSession.objects.filter(pk=session.pk, check_shown_at__isnull=True)
        if unshown.update(check_shown_at=now):  # once, however many states show it
            session.check_shown_at = now
            detail = {"due_at": due.isoformat(), **_figures(station, session)}
            _log(station, session, ProtectionEvent.Kind.REALITY_CHECK_SHOWN, detail)
    return {"interval": most.check_minutes, "due_at": due.isoformat(), "open": shown}


def answer_check(station: Station, answer: str) -> None:
    """The player's answer to the open reality check: ``continue``, ``history`` (the station
    shows the history; play goes on) or ``cash_out`` (the caller cashes out). The next check
    is due an interval after the answer. No open check: ``no_reality_check``."""
    ledger.lock_stations([station])
    session = current_session(station)
    most = maxima(station)
    if session is None or not _check_open(station, session, most):
        raise EngineError("no reality check is open", code="no_reality_check")
    assert most.check_minutes is not None  # an open check has an interval
    due = _check_due(session, most)
    session.next_check_at = timezone.now() + timedelta(minutes=most.check_minutes)
    session.check_shown_at = None
    session.save(update_fields=["next_check_at", "check_shown_at"])
    detail = {"answer": answer, "due_at": due.isoformat() if due else None}
    _log(station, session, ProtectionEvent.Kind.REALITY_CHECK_ANSWERED, detail)


# -- a break -------------------------------------------------------------------------------

MAX_BREAK_MINUTES = 30 * 24 * 60  # 30 days


def current_break(station: Station) -> StationBreak | None:
    """The station's break going on now, if any; a break that ended is logged as ended the
    first time it is looked at afterwards."""
    return _current_breaks([station]).get(station.pk)


def _current_breaks(stations: Sequence[Station]) -> dict[int, StationBreak]:
    """``current_break`` of each station that has one, by station id, in one query."""
    now = timezone.now()
    by_id = {station.pk: station for station in stations}
    # One query for both: the breaks going on and those ended but not yet logged as ended
    # (it runs for every state the station is sent).
    breaks = _BREAKS_TO_SHOW.list(ids=list(by_id), now=now)
    for ended in [taken for taken in breaks if taken.until <= now]:
        if StationBreak.objects.filter(pk=ended.pk, end_logged=False).update(end_logged=True):
            _log(
                by_id[ended.station_id],
                None,
                ProtectionEvent.Kind.BREAK_ENDED,
                {"until": ended.until.isoformat()},
            )
    going_on: dict[int, StationBreak] = {}
    for taken in breaks:
        if taken.until > now:
            going_on.setdefault(taken.station_id, taken)  # the first, as one station's did
    return going_on


def _break_shown(taken: StationBreak | None) -> dict[str, Any] | None:
    """The state's ``break``: None, or when the break started and when it ends."""
    if taken is None:
        return None
    return {"started_at": taken.started_at.isoformat(), "until": taken.until.isoformat()}


def refuse_on_break(station: Station) -> None:
    """A cash-in or a bet during a break: ``on_break``, with its end."""
    _refuse_during(current_break(station))


def _refuse_during(taken: StationBreak | None) -> None:
    if taken is not None:
        raise EngineError(
            f"the station is on a break until {taken.until.isoformat(timespec='minutes')}",
            code="on_break",
        )


def start_break(station: Station, minutes: int) -> StationBreak:
    """After the station cashed out: its break of ``minutes`` starts now."""
    refuse_on_break(station)
    until = timezone.now() + timedelta(minutes=minutes)
    taken = StationBreak.objects.create(station=station, until=until)
    detail = {"minutes": minutes, "until": until.isoformat()}
    _log(station, None, ProtectionEvent.Kind.BREAK_STARTED, detail)
    return taken


# -- inactivity ------------------------------------------------------------------------------

INACTIVITY_GRACE = timedelta(seconds=60)  # between the question and the lock


def _inactivity(
    station: Station,
    session: PlayerSession,
    most: Maxima,
    money: ledger.SessionMoney,
    last_entry: datetime | None,
) -> dict[str, Any] | None:
    """The state's ``session.inactivity`` (None: the jurisdiction has no idle time): when the
    station asks whether the player is there, when it locks betting, and whether it asks or
    has locked now (only with credits and no bet on a round). ``last_entry`` is when its
    money last moved (``Standing.last_entry``). A lock is logged once, and kept on the
    session for the floor manager until the player answers or plays."""
    if most.idle_minutes is None:
        return None
    moments = [session.opened_at, session.awake_at, last_entry]
    since = max(m for m in moments if m is not None)
    asks_at = since + timedelta(minutes=most.idle_minutes)
    locks_at = asks_at + INACTIVITY_GRACE
    now = timezone.now()
    credits = money.cash_in + money.net
    idle = now >= asks_at and credits > 0 and not in_a_round(station)
    locked = idle and now >= locks_at
    if locked and (session.locked_at is None or session.locked_at < since):
        session.locked_at = now
        session.save(update_fields=["locked_at"])
        _log(station, session, ProtectionEvent.Kind.INACTIVITY_LOCKED, {"since": since.isoformat()})
    elif not locked and session.locked_at is not None:
        session.locked_at = None  # the player came back: no longer a locked station
        session.save(update_fields=["locked_at"])
    return {
        "asks_at": asks_at.isoformat(),
        "locks_at": locks_at.isoformat(),
        "asking": idle and not locked,
        "locked": locked,
    }


def still_here(station: Station) -> None:
    """The player answers the inactivity question (or unlocks the locked station)."""
    session = current_session(station)
    if session is None:
        raise EngineError("no session is open", code="no_session")
    was_locked = session.locked_at is not None
    session.awake_at = timezone.now()
    session.locked_at = None
    session.save(update_fields=["awake_at", "locked_at"])
    _log(station, session, ProtectionEvent.Kind.INACTIVITY_ANSWERED, {"was_locked": was_locked})


# -- the limits ----------------------------------------------------------------------------


def set_limits(station: Station, changes: dict[str, Decimal | int | None]) -> None:
    """Set the player's limits of the session (``changes``: limit -> its new value, None to
    remove it). A first limit or a lower one applies at once; a higher one or a removal is
    refused whole (``limit_cool_off``: not this session). No session: ``no_session``."""
    ledger.lock_stations([station])
    session = current_session(station)
    if session is None:
        raise EngineError("limits are set for a session: cash in first", code="no_session")
    for name, value in changes.items():
        now = getattr(session, _FIELDS[name])
        if now is not None and (value is None or value > now):
            shown = "removed" if value is None else f"raised to {value}"
            raise EngineError(
                f"{name} {now} cannot be {shown} before the session ends (a cool-off: "
                "a lower limit applies at once)",
                code="limit_cool_off",
            )
    changed = {}
    for name, value in changes.items():
        if getattr(session, _FIELDS[name]) != value:
            setattr(session, _FIELDS[name], value)
            changed[name] = value if value is None or isinstance(value, int) else fmt(value)
    if changed:
        session.save(update_fields=[_FIELDS[name] for name in changed])
        _log(station, session, ProtectionEvent.Kind.LIMIT_SET, changed)


def check_stakes(station: Station, before: Decimal, after: Decimal) -> None:
    """Refuse a change of the station's bets that takes its stakes of the round from
    ``before`` to a higher ``after`` past a limit (``LimitReached``, with the limit's
    code); taking bets back is always allowed."""
    if after <= before:
        return
    kept = standing(station)
    _refuse_during(kept.taken)
    most, session, money = kept.most, kept.session, kept.money
    if session is not None and money is not None:
        if _stopped(session, money, most) == "time_limit_reached":
            raise LimitReached(
                f"the session's time limit, {_minutes(session, most)} minutes, is reached",
                code="time_limit_reached",
            )
    if most.stake is not None and after > most.stake:
        raise LimitReached(
            f"stakes {fmt(after)} are above the jurisdiction's most per round, {fmt(most.stake)}",
            code="stake_limit_reached",
        )
    if session is None or money is None:  # credits from before sessions were kept
        return
    idle = _inactivity(station, session, most, money, kept.last_entry)
    if idle is not None and idle["locked"]:
        raise EngineError(
            "betting is locked for inactivity (the credits are safe): answer that you are here",
            code="inactivity_locked",
        )
    if _check_open(station, session, most):
        raise EngineError(
            "a reality check is open: answer it to play on", code="reality_check_pending"
        )
    if session.stake_limit is not None and after > session.stake_limit:
        raise LimitReached(
            f"stakes {fmt(after)} are above your limit per round, {fmt(session.stake_limit)}",
            code="stake_limit_reached",
        )
    loss = -money.net
    if session.loss_limit is not None and loss + after > session.loss_limit:
        raise LimitReached(
            f"the session's loss {fmt(max(loss, Decimal(0)))} and stakes {fmt(after)} would "
            f"pass your loss limit {fmt(session.loss_limit)}",
            code="loss_limit_reached",
        )


def log_reached(station: Station, refusal: LimitReached) -> None:
    """Log a bet refused by a limit (after the refused change was undone)."""
    detail = {"code": refusal.code, "message": refusal.reason}
    _log(station, current_session(station), ProtectionEvent.Kind.LIMIT_REACHED, detail)


def _log(
    station: Station, session: PlayerSession | None, kind: str, detail: dict[str, Any]
) -> None:
    ProtectionEvent.objects.create(station=station, session=session, kind=kind, detail=detail)
    log.info("station %s: %s %s", station, kind, detail)


# -- the floor manager's report ------------------------------------------------------------

REPORTED_EVENTS = 1000  # the report's list of events, newest first; the counts are whole


def report(table_id: int, start: datetime, end: datetime) -> dict[str, Any]:
    """A table's protection events in [start, end) (a shift): reality checks shown and their
    answers, limits set and reached, breaks, inactivity locks and the hands completed
    automatically (the rounds' automatic decisions), with the events themselves."""
    events = ProtectionEvent.objects.filter(station__table_id=table_id, at__gte=start, at__lt=end)
    kinds: dict[str, int] = {}
    answers: dict[str, int] = {}
    reached: dict[str, int] = {}
    for kind, detail in events.values_list("kind", "detail"):
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == ProtectionEvent.Kind.REALITY_CHECK_ANSWERED:
            answers[detail["answer"]] = answers.get(detail["answer"], 0) + 1
        elif kind == ProtectionEvent.Kind.LIMIT_REACHED:
            reached[detail["code"]] = reached.get(detail["code"], 0) + 1
    automatic = RoundEvent.objects.filter(
        round__table_id=table_id,
        kind=RoundEvent.Kind.DECISION,
        created_at__gte=start,
        created_at__lt=end,
        payload__automatic=True,
    )
    K = ProtectionEvent.Kind
    listed = events.select_related("station").order_by("-pk")[:REPORTED_EVENTS]
    return {
        "table": table_id,
        "start": start.isoformat(),
        "end": end.isoformat(),
        "sessions": {
            "started": kinds.get(K.SESSION_STARTED, 0),
            "ended": kinds.get(K.SESSION_ENDED, 0),
        },
        "reality_checks": {"shown": kinds.get(K.REALITY_CHECK_SHOWN, 0), "answers": answers},
        "limits": {"set": kinds.get(K.LIMIT_SET, 0), "reached": reached},
        "breaks": {"started": kinds.get(K.BREAK_STARTED, 0), "ended": kinds.get(K.BREAK_ENDED, 0)},
        "inactivity": {
            "locked": kinds.get(K.INACTIVITY_LOCKED, 0),
            "answered": kinds.get(K.INACTIVITY_ANSWERED, 0),
        },
        "automatic_decisions": automatic.count(),
        "automatic_hands": automatic.values("round_id", "payload__hand").distinct().count(),
        "events": [
            {"at": e.at.isoformat(), "station": e.station.name, "kind": e.kind, "detail": e.detail}
            for e in listed
        ],
    }
