"""The station protocol's commands (docs/protocol.md), as services.

Every client message carries a ``client_id`` and gets exactly one reply: ``ok`` with the
station's new state, or an error with a code. The reply is kept under the client id, so
a resent message gets the same reply again and is never applied twice. Bets on the open
round are a slip of chip groups (one chip, a rebet, a double): undo takes back the last
group, clear all of them; each change is checked against the table's limits, the
special-bet placement rules and the station's credits before anything is written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeGuard

from django.db import transaction
from django.utils import timezone

from payouts import ledger, meters
from payouts.specials import check_placement
from rounds import disputes, writer
from rounds.engine import Action, Decision, EngineError, parse_money
from rounds.engine import Bet as EngineBet
from rounds.engine import Round as Engine
from rounds.engine.errors import shown
from rounds.engine.money import check_stake_limits, fmt
from rounds.models import Round
from stations import lobby, protection, seats
from stations.models import Station, StationCommand
from stations.recall import station_recall
from stations.selectors import (
    dealer_history,
    dealer_stats,
    last_result,
    player_history,
    table_info,
    valid_stations,
)
from stations.services import cash_in, tip
from tablehub import broadcast, fair_shoe, jsontext, lazy_savepoint
from tablehub.compiled import CompiledQuery, Param
from tablehub.rows import insert_values

MAX_CLIENT_ID = 64
# The parts of a station's state that change only between rounds (left out of replies).
BETWEEN_ROUNDS = (
    "info",
    "last_round",
    "last_bet",
    "last_win",
    "win",
    "player_history",
    "dealer_history",
    "dealer_stats",
    "virtual_shoe",
    "shoe_seed",
)
PENDING = {"pending": True}
# The refusal of a message whose station was deactivated or given a new credential after it
# joined: its consumer closes the socket (tablehub/session_guard.py).
SESSION_ENDED = "unauthorized"
REVOKED = EngineError("the station was deactivated or its credential changed", code=SESSION_ENDED)
MOVED_AWAY = EngineError(
    "the station moved to another table of its stadium: join it there", code=SESSION_ENDED
)
# The messages whose reply carries the whole state: a move's is the state at its new table.
WHOLE_STATE = frozenset(["state", "move_table"])


class Reply(dict[str, Any]):
    """A reply of ``handle_batch`` whose JSON was encoded for its stored row: ``text``, the
    same text the station is sent (not encoded a second time, on the event loop). A reply
    that is not stored (one resent) has none."""

    __slots__ = ("text",)
    text: str


def reply_text(reply: dict[str, Any]) -> str | None:
    """The reply's JSON when it was encoded already (``Reply``), else None."""
    return getattr(reply, "text", None)


def handle(
    station: Station, message: dict[str, Any], received_at: datetime | None = None
) -> dict[str, Any]:
    """Answer one client message (exactly one reply; a resent one is not applied twice).
    ``received_at``: when its frame arrived (now, if not given); it decides whether the
    message was on time (rounds/receipts.py)."""
    return handle_batch([(station, message, received_at or timezone.now())])[0]


Received = tuple[Station, dict[str, Any], datetime]  # a station, its message, its receipt time


def handle_batch(messages: list[Received]) -> list[dict[str, Any]]:
    """Answer messages of one table's stations, in their order, in one transaction holding
    the table's open round (stations/batches.py): each message's reply as if it were alone.
    A message resent with a client_id already answered, in an earlier transaction or earlier
    in this one, gets the stored reply again and is not applied twice. Anything but a
    refusal (EngineError) fails the whole transaction: nothing of it is written.

    A decision that would close its step (the round waits for its station alone), when it is
    not the batch's first message, is left with the messages after it for the next batch:
    the replies are those of the messages before it, fewer than the messages. So the answers
    before it are committed and sent without waiting for what closing the step writes (the
    dealer's turn, every box's settlement, the next step's prompts)."""
    table_ids = {station.table_id for station, _message, _at in messages}
    assert len(table_ids) == 1, "one table's messages"
    replies: list[dict[str, Any]] = []
    # One transaction for the commands, their effects and their stored replies: a process that
    # dies half-way leaves nothing, and the stations' resends run them afresh.
    stations = [station for station, _message, _at in messages]
    table_id = table_ids.pop()
    # The meters' changes of the batch are written once, at its end (payouts/meters.py).
    with (
        writer.holding_the_table(table_id),
        protection.reads_kept(stations),
        meters.batched(),
    ):
        # The session check (tablehub/session_guard.py) of every message, in one query.
        valid = valid_stations(
            {station.pk: station.credential for station, _m, _at in messages}, table_id
        )
        # A bet's credits are read under its station's lock: the betting stations' locks
        # taken once for the batch, outside any message's savepoint (its rollback would
        # release them), before their credits are read.
        betting = [
            s for s, message, _at in messages if s.pk in valid and message.get("type") in BETS
        ]
        # So is a decision's that stakes more (a double, a split, insurance), its credits read
        # once for the batch (payouts/ledger.py ``lock_credits``): all in one lock, by id.
        staking = [s for s, message, _at in messages if s.pk in valid and _stakes(message)]
        ledger.lock_stations(betting + staking)
        ledger.lock_credits(staking)
        writer.expect_bets(station.pk for station in betting)  # their slips read together
        answered = _answered(messages)
        new: dict[tuple[int, str], dict[str, Any]] = {}  # the stored replies' rows
        applied: list[tuple[int, Station, Applied]] = []  # replies to build once all are in
        resent: list[tuple[int, tuple[int, str]]] = []  # a client_id twice in this batch
        for station, message, at in messages:
            client_id = message.get("client_id")
            if station.pk not in valid:  # deactivated or its credential changed meanwhile
                replies.append(_reply(client_id if _is_client_id(client_id) else None, REVOKED))
                continue
            if station.table_id != table_id:  # it moved away earlier in this batch
                answer = client_id if _is_client_id(client_id) else None
                replies.append(_reply(answer, MOVED_AWAY))
                continue
            if not _is_client_id(client_id):
                error = "client_id must be a string of 1 to 64 characters"
                replies.append(_reply(None, EngineError(error, station.name, code="bad_message")))
                continue
            key = (station.pk, client_id)
            if key in new:
                resent.append((len(replies), key))
                replies.append({})
                continue
            if key in answered:
                replies.append(_stored(station, client_id, answered[key]))
                continue
            kind = message.get("type")
            if replies and kind == "decide" and writer.closes_the_step(table_id, station.name):
                break
            if kind != "decide" and kind not in BETS:
                # A decision's event and a bet's slip wait to be written with the batch's
                # others; anything else may read the log, the round's row or the bets, so it
                # finds them written (a late bet's expiry flushes them itself).
                writer.flush()
            if kind not in BETS:
                protection.forget_reads()  # it may change a session, a break or credits
            before = _round_mark(table_id)
            outcome = _answer(station, message, at, client_id)
            if kind in BETS and _round_mark(table_id) != before:
                # A late bet's expiry closed the bets: the stakes left the credits.
                protection.forget_reads()
            if isinstance(outcome, Applied):
                applied.append((len(replies), station, outcome))
                outcome_reply = Reply()
            else:
                outcome_reply = Reply(outcome)
            new[key] = {"station_id": station.pk, "client_id": client_id, "reply": outcome_reply}
            replies.append(outcome_reply)
        writer.flush()
        # The states of the applied commands' replies, read together once every command of
        # the batch is applied: what the stations get is what this transaction commits.
        states = _states([(station, done.full) for _index, station, done in applied])
        for (index, _station, done), state in zip(applied, states, strict=True):
            replies[index].update(_reply(done.client_id, None, state) | (done.said or {}))
        for index, key in resent:
            replies[index].update(new[key]["reply"] | {"resent": True})
        for row in new.values():  # each encoded once: for its row and for its station
            reply = row["reply"]
            reply.text = row["reply"] = jsontext.encode(reply)
        # A second process answering the same client_id meanwhile makes this insert fail:
        # then this whole transaction is undone, and the resend is answered from its reply.
        insert_values(StationCommand, new.values())
    return replies


# The decisions that take money from the credits as they are made.
_STAKING = frozenset([Action.DOUBLE, Action.DOUBLE_HALF, Action.SPLIT, Action.INSURE])


def _stakes(message: dict[str, Any]) -> bool:
    action = message.get("action")  # not checked yet: any JSON value
    return message.get("type") == "decide" and isinstance(action, str) and action in _STAKING


def _round_mark(table_id: int) -> tuple[int, str, int] | None:
    """What a change of the table's open round (its events, its phase) changes."""
    round = writer.current_round(table_id)
    return None if round is None else (round.pk, round.phase, round.last_seq)


# The stored replies of a batch's client ids (tablehub/compiled.py: its SQL built once).
_STORED_REPLIES = CompiledQuery(
    lambda: StationCommand.objects.filter(
        station_id__among=Param("stations"), client_id__among_text=Param("client_ids")
    ).values_list("station_id", "client_id", "reply")
)


def _answered(messages: list[Received]) -> dict[tuple[int, str], Any]:
    """The stored replies of the messages' client_ids already answered, by (station, id)."""
    wanted = {(s.pk, m["client_id"]) for s, m, _at in messages if _is_client_id(m.get("client_id"))}
    stored = _STORED_REPLIES.list(
        stations={pk for pk, _id in wanted}, client_ids={cid for _pk, cid in wanted}
    )
    return {(pk, cid): reply for pk, cid, reply in stored if (pk, cid) in wanted}


def _is_client_id(client_id: object) -> TypeGuard[str]:
    return isinstance(client_id, str) and 1 <= len(client_id) <= MAX_CLIENT_ID


def _stored(station: Station, client_id: str, reply: Any) -> dict[str, Any]:
    if reply == PENDING:  # only from before commands were one transaction
        error = EngineError("this message is still being handled", station.name, code="in_progress")
        return _reply(client_id, error)
    return reply | {"resent": True}


@dataclass(frozen=True)
class Applied:
    """A command applied: its reply is the station's state (read with the batch's others)
    and what its handler said."""

    client_id: str
    said: dict[str, Any] | None
    full: bool


def _answer(
    station: Station, message: dict[str, Any], at: datetime, client_id: str
) -> dict[str, Any] | Applied:
    try:
        said = _dispatch(station, message, at)
    except EngineError as exc:
        return _reply(client_id, exc.at(station.name))
    # A command's reply carries the live state; the table's set-up and the histories, which
    # change only between rounds, come with ``join`` and ``state``.
    return Applied(client_id, said, full=message.get("type") in WHOLE_STATE)


def _reply(client_id: str | None, error: EngineError | None, state: Any = None) -> dict[str, Any]:
    if error is None:
        return {"type": "reply", "client_id": client_id, "ok": True, "state": state}
    refusal: dict[str, Any] = {"code": error.code, "message": error.line()}
    if isinstance(error, writer.TooLate):  # when it arrived, by the server's clock
        refusal["received_at"] = error.received_at.isoformat()
        if error.deadline is not None:
            refusal["deadline"] = error.deadline.isoformat()
    return {"type": "reply", "client_id": client_id, "ok": False, "error": refusal}


def _dispatch(station: Station, message: dict[str, Any], at: datetime) -> dict[str, Any] | None:
    """Apply the message; what its handler returns goes into the reply beside the state (a
    cash-out's ``receipt``, a recall's ``recall``)."""
    kind = message.get("type")
    handler = HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        raise EngineError(f"unknown message type {kind!r}", code="bad_message")
    return handler(station, message, at)


# -- betting ---------------------------------------------------------------------------------


def open_round(station: Station) -> Round | None:
    return writer.current_round(station.table_id)


def _betting_round(station: Station, at: datetime | None) -> Round:
    round = open_round(station)
    if round is not None:
        writer.expire_if_late(round.pk, at)
        round = open_round(station)  # as the expiry left it
    if round is None or round.phase != Round.Phase.BETTING:
        raise EngineError("bets are closed", code="bets_closed")
    if at is not None and round.deadline is not None and at > round.deadline:
        # Received after the deadline while the close waits for bets received in time.
        raise EngineError("bets are closed", code="bets_closed")
    return round


def _change_slip(station: Station, change, at: datetime | None = None) -> None:
    """Apply ``change(groups) -> groups`` to the station's slip if the result is a valid
    set of bets; write the slip and the Bet rows in one transaction."""
    round = _betting_round(station, at)
    try:
        _write_slip(station, round, change)
    except protection.LimitReached as refusal:
        protection.log_reached(station, refusal)  # kept: the refused change is undone
        raise


def _write_slip(station: Station, round: Round, change) -> None:
    # Inside a batch, a savepoint only if the change writes (tablehub/lazy_savepoint.py).
    with lazy_savepoint.atomic():
        round = writer.lock_for_betting(round.pk)  # bets close after us, or before
        # The credits are read under the station's lock: a cash-out is before us, or after.
        ledger.lock_stations([station])
        # No other writer can make this slip meanwhile: the round's lock is ours.
        slip = writer.bet_slip(round, station)
        groups = change(list(slip), round)
        totals = _totals(groups)
        _check_bets(station, round, totals)
        before = sum(_totals(slip).values(), Decimal(0))
        protection.check_stakes(station, before, sum(totals.values(), Decimal(0)))
        writer.set_bets(round, station, groups, totals)
        # The croupier tablet shows who is betting; bets are private, so it is only told
        # that they changed and reads its own state.
        table_id = round.table_id
        transaction.on_commit(
            lambda: broadcast.tell_croupier(table_id, {"type": "changed", "what": "bets"})
        )


def _totals(groups: list[list[dict[str, Any]]]) -> dict[tuple[int, str], Decimal]:
    totals: dict[tuple[int, str], Decimal] = defaultdict(Decimal)
    for group in groups:
        for chip in group:
            totals[(chip["box"], chip["bet"])] += Decimal(chip["amount"])
    return dict(totals)


def _check_bets(station: Station, round: Round, totals: dict[tuple[int, str], Decimal]) -> None:
    config = round.config
    boxes = round.table.boxes
    for (box, code), stake in totals.items():
        if not 1 <= box <= boxes:
            raise EngineError(f"the table has boxes 1 to {boxes}", station.name, box)
        limit = config.limit(code)  # main, or the special bet's own limits or special's
        check_stake_limits(code, stake, limit, station.name, box)
    bets = [EngineBet(station.name, box, code, stake) for (box, code), stake in totals.items()]
    check_placement(bets, config.ruleset().special_without_main, config.paytables())
    seats.check_bet(station, round, totals)  # seat mode: its own seat, or behind one
    staked = sum(totals.values(), Decimal(0))
    credits = protection.standing(station).credits  # read under the station's lock
    if staked > credits:
        raise EngineError(
            f"credits {fmt(credits)} do not cover the stakes {fmt(staked)}",
            station.name,
            code="insufficient_credits",
        )


def _chip(message: dict[str, Any]) -> dict[str, Any]:
    code = message.get("bet", "main")
    if not isinstance(code, str):
        raise EngineError('bet must be a bet code such as "main"', code="bad_message")
    box, amount = _box_and_amount(message)
    if amount is None:
        raise EngineError("a bet needs an amount", box=box, code="bad_amount")
    return {"box": box, "bet": code, "amount": str(amount)}


def place_bets(station: Station, bets: Iterable[tuple[int, str, Decimal]]) -> None:
    """Put bets (box, bet code, stake) on the open round as one group, checked as a whole,
    as a station's ``place_many`` does: the one way bets are placed (stations, tests and
    the demo). Raises EngineError having changed nothing."""
    chips = [{"box": box, "bet": code, "amount": str(stake)} for box, code, stake in bets]
    _change_slip(station, lambda groups, _round: groups + [chips])


def _place(station: Station, message: dict[str, Any], at: datetime) -> None:
    chip = _chip(message)
    _change_slip(station, lambda groups, _round: groups + [[chip]], at)


def _place_many(station: Station, message: dict[str, Any], at: datetime) -> None:
    """Several bets put down as one group (restoring a set of bets): checked as a whole,
    so a bust bet may come before the main bets that cover it."""
    bets = message.get("bets")
    if not isinstance(bets, list) or not bets or not all(isinstance(b, dict) for b in bets):
        raise EngineError("bets must be a list of bets", code="bad_message")
    chips = [_chip(bet) for bet in bets]
    _change_slip(station, lambda groups, _round: groups + [chips], at)


def _undo(station: Station, message: dict[str, Any], at: datetime) -> None:
    _change_slip(station, lambda groups, _round: groups[:-1], at)


def _clear(station: Station, message: dict[str, Any], at: datetime) -> None:
    _change_slip(station, lambda groups, _round: [], at)


def _double_bets(station: Station, message: dict[str, Any], at: datetime) -> None:
    def double(groups, _round):
        chips = [
            {"box": box, "bet": code, "amount": str(stake)}
            for (box, code), stake in _totals(groups).items()
        ]
        if not chips:
            raise EngineError("there are no bets to double", code="no_bets")
        return groups + [chips]

    _change_slip(station, double, at)


def _last_played_round(station: Station, current: Round) -> Round | None:
    """The last settled round in which the station had a bet ("the last game")."""
    return (
        Round.objects.filter(table=station.table, phase="settled", bets__station=station)
        .exclude(pk=current.pk)
        .order_by("-pk")
        .first()
    )


def _rebet(station: Station, message: dict[str, Any], at: datetime) -> None:
    def rebet(groups, round):
        last = _last_played_round(station, round)
        if last is None:
            raise EngineError("there is no previous round to repeat", code="no_bets")
        chips = [
            {"box": b.box, "bet": b.code, "amount": str(b.stake)}
            for b in last.bets.filter(station=station).order_by("box", "pk")
        ]
        return groups + [chips]  # pressing rebet again adds the same bets again

    _change_slip(station, rebet, at)


def _repeat_last(station: Station, message: dict[str, Any], at: datetime) -> None:
    def repeat(groups, _round):
        if not groups:
            raise EngineError("there is no bet to repeat", code="no_bets")
        return groups + [groups[-1]]

    _change_slip(station, repeat, at)


def _box_and_amount(message: dict[str, Any]) -> tuple[int, Decimal | None]:
    box = message.get("box")
    if isinstance(box, bool) or not isinstance(box, int):
        raise EngineError(f"box must be a whole number, got {box!r}", code="bad_message")
    if "amount" not in message:
        return box, None
    amount = money_string(message.get("amount"), "amount", box)
    if amount <= 0:
        raise EngineError("amount must be more than 0.00", box=box, code="bad_amount")
    return box, amount


def money_string(value: object, what: str, box: int | None = None) -> Decimal:
    """An amount of a station message: a decimal string, as docs/protocol.md says money is
    written (a JSON number is refused, not read: the contract is strings), else
    ``bad_amount``."""
    if not isinstance(value, str):
        raise EngineError(
            f'{what} must be a decimal string such as "10.00", got {shown(value)}',
            box=box,
            code="bad_amount",
        )
    try:
        return parse_money(value, what)
    except EngineError as exc:
        raise EngineError(exc.reason, box=box, code="bad_amount") from None


def _check_box(station: Station, box: int) -> None:
    boxes = station.table.boxes
    if not 1 <= box <= boxes:
        raise EngineError(f"the table has boxes 1 to {boxes}", box=box)


def _bet_all(station: Station, message: dict[str, Any], at: datetime) -> None:
    """One chip on the main bet and on every special bet the table offers, on one box
    (seed 001 §4.1: Bet All); pressing it again adds another chip to each."""
    box, amount = _box_and_amount(message)
    if amount is None:
        raise EngineError("bet_all needs an amount", box=box, code="bad_amount")

    def bet_all(groups, round):
        codes = ["main", *round.config.offered_special_bets()]
        return groups + [[{"box": box, "bet": code, "amount": str(amount)} for code in codes]]

    _change_slip(station, bet_all, at)


def _let_it_play(station: Station, message: dict[str, Any], at: datetime) -> None:
    """Bet the main game on a box with what that box won in the station's last round
    (seed 001 §3.5; special bets excluded), up to the table's Let It Play cap."""
    box, _ = _box_and_amount(message)
    _check_box(station, box)  # a box the table does not have: ``invalid``, as for a bet

    def let_it_play(groups, round):
        last = _last_played_round(station, round)
        won = Decimal(0)
        if last is not None:
            for hand in last.hands.filter(station=station, box=box):
                if hand.returned > hand.stake:
                    won += hand.returned
        if won <= 0:
            raise EngineError("this box won nothing in the last round", box=box, code="no_bets")
        cap = round.config.limit("let_it_play")
        if cap is not None and won > cap[1]:
            raise EngineError(
                f"{fmt(won)} is above the Let It Play cap {fmt(cap[1])}",
                box=box,
                code="above_maximum",
            )
        return groups + [[{"box": box, "bet": "main", "amount": str(won)}]]

    _change_slip(station, let_it_play, at)


# -- the round in play -----------------------------------------------------------------------


def _decide(station: Station, message: dict[str, Any], at: datetime) -> None:
    round = open_round(station)
    if round is None or round.phase in (Round.Phase.BETTING, Round.Phase.DEAL):
        if writer.timed_out_after(station.table_id, at, station.name):
            # Its round ended by the timeout while the answer waited (the next may be open).
            raise writer.TooLate(at, None, station.name)
        raise EngineError("no question is open for this station", code="not_your_turn")
    action = message.get("action")
    if not isinstance(action, str):
        raise EngineError('action must be a decision such as "hit"', code="bad_message")
    hand = message.get("hand")
    if hand is not None and not isinstance(hand, str):
        raise EngineError("hand must be a hand id", code="bad_message")
    if not writer.read(round.pk, lambda engine: station.name in engine.seats):
        raise EngineError("this station has no hand in this round", code="not_your_turn")
    writer.record(round.pk, Decision(station.name, action, hand), at)


def _take_seat(station: Station, message: dict[str, Any], at: datetime) -> None:
    box = message.get("box")
    if isinstance(box, bool) or not isinstance(box, int):
        raise EngineError(f"box must be a whole number, got {box!r}", code="bad_message")
    seats.take_seat(station, box)


def _leave_seat(station: Station, message: dict[str, Any], at: datetime) -> None:
    seats.leave_seat(station)


def _set_follow(station: Station, message: dict[str, Any], at: datetime) -> None:
    follow = message.get("follow")
    if not isinstance(follow, bool):
        raise EngineError("follow must be true or false", code="bad_message")
    seats.set_follow(station, follow)


def _dispute(station: Station, message: dict[str, Any], at: datetime) -> None:
    """Dispute a round (docs/protocol.md, "Disputes"): the round halts for a supervisor."""
    round_id = message.get("round")
    if round_id is not None and (isinstance(round_id, bool) or not isinstance(round_id, int)):
        raise EngineError("round must be a round id", code="bad_message")
    disputes.file_dispute(station, round_id)


# -- money -----------------------------------------------------------------------------------


def _has_bets_on_the_table(station: Station) -> bool:
    round = open_round(station)
    return round is not None and round.bets.filter(station=station).exists()


def _cash_in(station: Station, message: dict[str, Any], at: datetime) -> None:
    amount = message.get("amount")
    if not isinstance(amount, str):
        money_string(amount, "cash-in amount")  # refused: money is a decimal string
    # The value is the cash-in's to judge: bad_amount, or amount_too_large above the most.
    cash_in(station, amount, key=f"client:{message['client_id']}")


def _cash_out(station: Station, message: dict[str, Any], at: datetime) -> dict[str, Any]:
    with transaction.atomic():
        # The lock order of a bet change (the round, then the station): a bet and a
        # cash-out at once are one after the other, never both on the credits before.
        round = open_round(station)
        if round is not None:
            Round.objects.select_for_update(no_key=True).filter(pk=round.pk).first()
        ledger.lock_stations([station])
        if _has_bets_on_the_table(station):
            raise EngineError(
                "cash-out is only possible with no bets on the table", code="bets_on_table"
            )
        paid = ledger.cash_out(station, message["client_id"])
        protection.close_session(station)
    # The player's receipt: kept with the reply, so a cash-out sent again shows the same one.
    receipt = {
        "station": station.name,
        "table": station.table.name,
        "table_id": station.table_id,
        "amount": fmt(paid),
        "currency": station.table.currency,
        "at": timezone.now().isoformat(),
    }
    return {"receipt": receipt}


def _tip(station: Station, message: dict[str, Any], at: datetime) -> None:
    """A tip to the dealer from the credits, where the jurisdiction allows it
    (stations/services.py)."""
    tip(station, money_string(message.get("amount"), "amount"), key=message["client_id"])


def _set_limits(station: Station, message: dict[str, Any], at: datetime) -> None:
    """The player's limits for the session (stations/protection.py): ``loss_limit`` and
    ``stake_limit`` money strings, ``time_limit`` whole minutes; null removes one."""
    changes: dict[str, Decimal | int | None] = {}
    for name in protection.LIMITS:
        if name not in message:
            continue
        value = message[name]
        if value is None:
            changes[name] = None
        elif name == "time_limit":
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise EngineError(
                    "time_limit must be whole minutes, at least 1", code="bad_message"
                )
            changes[name] = value
        else:
            amount = money_string(value, name)
            if amount <= 0:
                raise EngineError(f"{name} must be more than 0.00", code="bad_amount")
            changes[name] = amount
    if not changes:
        raise EngineError(
            "set_limits needs loss_limit, stake_limit or time_limit", code="bad_message"
        )
    protection.set_limits(station, changes)


def _take_break(station: Station, message: dict[str, Any], at: datetime) -> dict[str, Any]:
    """A break of ``minutes``: the station cashes out, then refuses cash-ins and bets until
    the break ends (stations/protection.py)."""
    minutes = message.get("minutes")
    most = protection.MAX_BREAK_MINUTES
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= most:
        raise EngineError(f"minutes must be a whole number from 1 to {most}", code="bad_message")
    protection.refuse_on_break(station)
    paid = _cash_out(station, message, at)
    protection.start_break(station, minutes)
    return paid  # the cash-out's receipt


def _still_here(station: Station, message: dict[str, Any], at: datetime) -> None:
    protection.still_here(station)


REALITY_CHECK_ANSWERS = ("continue", "history", "cash_out")


def _reality_check(
    station: Station, message: dict[str, Any], at: datetime
) -> dict[str, Any] | None:
    """The player's answer to the open reality check (stations/protection.py)."""
    answer = message.get("answer")
    if answer not in REALITY_CHECK_ANSWERS:
        raise EngineError('answer must be "continue", "history" or "cash_out"', code="bad_message")
    protection.answer_check(station, answer)
    return _cash_out(station, message, at) if answer == "cash_out" else None  # its receipt


def _recall(station: Station, message: dict[str, Any], at: datetime) -> dict[str, Any]:
    """The station's last games (stations/recall.py), as many as its jurisdiction asks."""
    games = protection.recall_games(station)
    return {"recall": {"games": station_recall(station, games), "most": games}}


def _state(station: Station, message: dict[str, Any], at: datetime) -> None:
    return None


def _tables(station: Station, message: dict[str, Any], at: datetime) -> dict[str, Any]:
    """The tables of the station's stadium (stations/lobby.py), beside its state."""
    return {"tables": lobby.stadium_tables(station)}


def _move_table(station: Station, message: dict[str, Any], at: datetime) -> dict[str, Any]:
    """Move the station to another table of its stadium, between rounds, with its credits
    (stations/lobby.py); the reply names the table and its station page, and carries the
    whole state there. The station then joins that table's socket (this one is closed)."""
    table_id = message.get("table")
    if isinstance(table_id, bool) or not isinstance(table_id, int):
        raise EngineError("table must be a table id", code="bad_message")
    table = lobby.move_station(station, table_id, message["client_id"])
    page = lobby.station_page(station, table)
    return {"moved": {"table_id": table.pk, "table": table.name, "page": page}}


def _shoe_seed(station: Station, message: dict[str, Any], at: datetime) -> dict[str, Any]:
    """The station's seed for its video table's next virtual shuffle (tablehub/fair_shoe.py);
    the reply carries it back as it will be mixed in."""
    return {"shoe_seed": fair_shoe.add_station_seed(station, message.get("seed"))}


# The messages that change a station's bets and nothing else: a batch checks them against
# the stations' protection read once (stations/protection.py, ``reads_kept``).
BETS = frozenset(
    [
        "place",
        "place_many",
        "undo",
        "clear",
        "double_bets",
        "rebet",
        "repeat_last",
        "bet_all",
        "let_it_play",
    ]
)

HANDLERS: dict[str, Callable[[Station, dict[str, Any], datetime], dict[str, Any] | None]] = {
    "place": _place,
    "place_many": _place_many,
    "undo": _undo,
    "clear": _clear,
    "double_bets": _double_bets,
    "rebet": _rebet,
    "repeat_last": _repeat_last,
    "bet_all": _bet_all,
    "let_it_play": _let_it_play,
    "decide": _decide,
    "take_seat": _take_seat,
    "leave_seat": _leave_seat,
    "set_follow": _set_follow,
    "dispute": _dispute,
    "cash_in": _cash_in,
    "cash_out": _cash_out,
    "tip": _tip,
    "set_limits": _set_limits,
    "reality_check": _reality_check,
    "take_break": _take_break,
    "still_here": _still_here,
    "recall": _recall,
    "shoe_seed": _shoe_seed,
    "tables": _tables,
    "move_table": _move_table,
    "state": _state,
}


# -- what a station sees ---------------------------------------------------------------------


def station_state(station: Station, full: bool = True) -> dict[str, Any]:
    """Everything a station needs to draw itself, e.g. after a reconnect: the table's set-up,
    credits, the open round, its bets, (past betting) its hands and question, its last result
    and the histories. Never the hole card. ``full=False`` leaves out the set-up, the last
    result and the histories (``BETWEEN_ROUNDS``): a command's reply, many per round."""
    return station_states([station], full)[0]


def _states(wanted: list[tuple[Station, bool]]) -> list[dict[str, Any]]:
    """``station_state`` of each (station, full), the replies' states together."""
    states = iter(station_states([station for station, full in wanted if not full], full=False))
    return [station_state(station) if full else next(states) for station, full in wanted]


def station_states(stations: Sequence[Station], full: bool = True) -> list[dict[str, Any]]:
    """``station_state`` of several stations of one table, in their order: what they share
    (the round, the engine's view) read once, and their credits and protection together
    (``protection.standings``), whatever their number (a batch's replies)."""
    if not stations:
        return []
    table = stations[0].table
    round = open_round(stations[0]) or table.rounds.order_by("-pk").first()
    standings = protection.current_standings(stations)  # credits, sessions, breaks together
    now = timezone.now().isoformat()
    cards = 0
    views: dict[str, dict[str, Any]] = {}
    bets: dict[str, list[tuple[int, str, Decimal]]] = {}  # station name -> (box, code, stake)
    if round is not None and writer.bets_closed(round):  # the engine knows the round
        names = [station.name for station in stations]
        cards, views, bets = writer.read(round.pk, lambda engine: _views(engine, names))
    elif round is not None:
        placed = writer.stations_bets(round, [station.pk for station in stations])
        bets = {s.name: [(b.box, b.code, b.stake) for b in placed[s.pk]] for s in stations}
    # What every state of the round shows alike, made once (each state gets its own copy).
    shown_round = (
        None
        if round is None
        else {
            "id": round.pk,
            "number": round.number,
            "phase": round.phase,
            "deadline": round.deadline.isoformat() if round.deadline else None,
            "last_event_id": f"{round.pk}.{round.last_seq}",
            "halted": writer.is_halted(round),
        }
    )
    with_bets = {station.pk for station in stations if bets.get(station.name)}
    buttons = disputes.stations_disputes(stations, round, with_bets, cards)
    states = []
    for station in stations:
        state: dict[str, Any] = {
            "station": station.name,
            "server_time": now,
            "credits": fmt(standings[station.pk].credits),
            "round": None,
            **protection.shown(station, standings[station.pk]),
        }
        if full:
            config = round.config if round is not None else table.current_config()
            history = player_history(station)
            dealer = dealer_history(table)
            state |= {
                "info": table_info(table, config) if config is not None else None,
                **last_result(history),
                "player_history": history,
                "dealer_history": dealer,
                "dealer_stats": dealer_stats(dealer),
                # The virtual shoe's commitment (null: none, e.g. a card reader's shoe) and
                # the seed this station gave for the next shuffle.
                "virtual_shoe": fair_shoe.current_commitment(table.pk),
                "shoe_seed": fair_shoe.pending_seed(station),
                # Seat mode: who sits where, this station's seat and follow choice (null:
                # common draw).
                "seating": seats.seating_state(station, config),
            }
        if shown_round is None:
            state["dispute"] = buttons[station.pk]
            states.append(state)
            continue
        state["round"] = dict(shown_round)
        state["bets"] = [
            {"box": box, "bet": code, "stake": fmt(stake)}
            for box, code, stake in bets[station.name]
        ]
        if station.name in views:
            state["table"] = views[station.name]
        state["dispute"] = buttons[station.pk]
        states.append(state)
    return states


def _views(
    engine: Engine, names: list[str]
) -> tuple[int, dict[str, dict[str, Any]], dict[str, list[tuple[int, str, Decimal]]]]:
    """How many cards the round has drawn, the table as each station sees it, and each
    station's bets as they closed (box, code, stake; by box, then as placed): once bets are
    closed the engine holds them, and a batch's replies need not read the bets' rows."""
    public = engine.public_view()  # one for all: each seated station's adds its own part
    views = {
        name: public | {"station": engine.own_view(name)} if name in engine.seats else public
        for name in names
    }
    bets: dict[str, list[tuple[int, str, Decimal]]] = {name: [] for name in names}
    for bet in engine.bets:  # as closed: by station, box, then as placed (writer.close_bets)
        if bet.station in bets:
            bets[bet.station].append((bet.box, bet.code, bet.stake))
    return len(engine.drawn), views, bets
