"""Player protection over real websockets (docs/protocol.md, "Session and limits"): the
session in the state from the first cash-in to the cash-out, its money read from the ledger,
the limits a player sets (lower at once, higher not this session) and the jurisdiction's
maxima, each refusal with its own code; every frame is checked against the schema and every
protection event is logged."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from django.db import connections
from django.utils import timezone

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import CardDrawn, Decision, RuleSet, parse_card
from rounds.models import Round
from stations.models import PlayerSession, ProtectionEvent, Station, StationBreak
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import play
from tests.test_protocol_contract import (
    STATION_FRAME,
    STATION_MESSAGE,
    Socket,
    assert_valid,
    code,
)

db = database_sync_to_async


# The sockets a test joined: closed when it ends (an open one leaves its table's listener
# waiting on the channel layer, and the loop's close cancels it: a warning, not an end).
JOINED: list[Socket] = []


@pytest.fixture(autouse=True)
async def _close_the_consumers_connection():
    """As tests/test_protocol_contract.py does: the consumers' database thread keeps no
    connection open for the tests that run after these (pytest-django runs the tests
    without a database last). The test's sockets are closed first."""
    yield
    while JOINED:
        await JOINED.pop().ws.disconnect()
    await db(connections.close_all)()


@pytest.fixture
def table(transactional_db):
    jurisdiction = Jurisdiction.objects.create(code="pp", name="Protected")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction, boxes=3)
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        limits={"main": ["1", "100"]},
        timers={"betting": 600, "insurance": 600, "bonus": 600, "play": 600},
        special_bets={},
    )
    station = Station(table=table, name="s1")
    station.set_credential("s1-secret")
    station.save()
    return table


async def join(table: Table) -> Socket:
    s = await Socket.open(f"/ws/tables/{table.pk}/station/", STATION_MESSAGE)
    reply = await s.ask(
        {"type": "join", "client_id": "j", "station": "s1", "credential": "s1-secret"}
    )
    assert reply["ok"], reply
    JOINED.append(s)
    return s


async def ask(s: Socket, message: dict) -> dict:
    reply = await s.ask(message)
    assert_valid(STATION_FRAME, reply)
    return reply


def kinds(table: Table) -> list[str]:
    return list(ProtectionEvent.objects.filter(station__table=table).values_list("kind", flat=True))


@pytest.mark.django_db(transaction=True)
async def test_a_session_runs_from_the_first_cash_in_to_the_cash_out(table):
    s = await join(table)
    assert (await ask(s, {"type": "state", "client_id": "q0"}))["state"]["session"] is None

    first = (await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"}))["state"]
    session = first["session"]
    assert session["cash_in"] == "100.00" and session["net"] == "0.00"
    assert session["limits"] == {"loss_limit": None, "stake_limit": None, "time_limit": None}
    assert session["maxima"] == {"stake_limit": None, "time_limit": None}
    assert session["stopped"] is None
    # a second cash-in is the same session: its start stays, its cash-in grows
    again = (await ask(s, {"type": "cash_in", "client_id": "c2", "amount": "20.50"}))["state"]
    assert again["session"]["started_at"] == session["started_at"]
    assert again["session"]["cash_in"] == "120.50"

    # a round lost (18 against 19): the session's net is the ledger's, to the cent
    station = await db(Station.objects.get)(name="s1")
    await db(play)(table, [(station, 1, "main", "30")], "TS 9H 8D TC", [("s1", "stand")])
    state = (await ask(s, {"type": "state", "client_id": "q1"}))["state"]
    assert state["credits"] == "90.50"
    assert state["session"]["staked"] == "30.00" and state["session"]["won"] == "0.00"
    assert state["session"]["net"] == "-30.00"
    assert Decimal(state["session"]["cash_in"]) + Decimal(state["session"]["net"]) == Decimal(
        state["credits"]
    )

    out = (await ask(s, {"type": "cash_out", "client_id": "o1"}))["state"]
    assert out["session"] is None and out["credits"] == "0.00"
    # the next cash-in is a new session, counted from it alone
    new = (await ask(s, {"type": "cash_in", "client_id": "c3", "amount": "10"}))["state"]
    assert new["session"]["cash_in"] == "10.00" and new["session"]["net"] == "0.00"
    assert new["session"]["started_at"] != session["started_at"]
    assert await db(kinds)(table) == ["session_started", "session_ended", "session_started"]
    ended = await db(ProtectionEvent.objects.get)(kind="session_ended")
    assert ended.detail["net"] == "-30.00" and ended.detail["cash_in"] == "120.50"
    assert await db(PlayerSession.objects.filter(closed_at__isnull=True).count)() == 1


@pytest.mark.django_db(transaction=True)
async def test_a_cash_out_with_no_credits_ends_the_session_too(table):
    s = await join(table)
    await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "30"})
    station = await db(Station.objects.get)(name="s1")
    await db(play)(table, [(station, 1, "main", "30")], "TS 9H 8D TC", [("s1", "stand")])
    out = (await ask(s, {"type": "cash_out", "client_id": "o1"}))["state"]
    assert out["credits"] == "0.00" and out["session"] is None


@pytest.mark.django_db(transaction=True)
async def test_limits_go_down_at_once_and_up_only_next_session(table):
    s = await join(table)
    refused = await ask(s, {"type": "set_limits", "client_id": "l0", "loss_limit": "50"})
    assert code(refused) == "no_session"
    await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"})

    message = {"type": "set_limits", "client_id": "l1", "loss_limit": "50", "time_limit": 60}
    limits = (await ask(s, message))["state"]["session"]["limits"]
    assert limits == {"loss_limit": "50.00", "stake_limit": None, "time_limit": 60}
    lower = {"type": "set_limits", "client_id": "l2", "loss_limit": "40.5", "stake_limit": "25"}
    limits = (await ask(s, lower))["state"]["session"]["limits"]
    assert limits == {"loss_limit": "40.50", "stake_limit": "25.00", "time_limit": 60}
    for client_id, change in [
        ("l3", {"loss_limit": "41"}),  # higher
        ("l4", {"time_limit": None}),  # removed
        ("l5", {"stake_limit": "20", "time_limit": 90}),  # one lower, one higher: none
    ]:
        reply = await ask(s, {"type": "set_limits", "client_id": client_id, **change})
        assert code(reply) == "limit_cool_off", change
    state = (await ask(s, {"type": "state", "client_id": "q"}))["state"]
    assert state["session"]["limits"] == limits
    for client_id, change, expected in [
        ("b1", {"loss_limit": 10}, "bad_amount"),
        ("b2", {"loss_limit": "0"}, "bad_amount"),
        ("b3", {"time_limit": 0}, "bad_message"),
        ("b4", {"time_limit": "60"}, "bad_message"),
        ("b5", {}, "bad_message"),
    ]:
        message = {"type": "set_limits", "client_id": client_id, **change}
        reply = await s.ask(message, valid=False)
        assert_valid(STATION_FRAME, reply)
        assert code(reply) == expected, change

    # the next session starts with no limits
    await ask(s, {"type": "cash_out", "client_id": "o1"})
    again = (await ask(s, {"type": "cash_in", "client_id": "c2", "amount": "5"}))["state"]
    assert again["session"]["limits"] == {
        "loss_limit": None,
        "stake_limit": None,
        "time_limit": None,
    }
    sets = await db(
        lambda: list(
            ProtectionEvent.objects.filter(kind="limit_set").values_list("detail", flat=True)
        )
    )()
    assert sets == [
        {"loss_limit": "50.00", "time_limit": 60},
        {"loss_limit": "40.50", "stake_limit": "25.00"},
    ]


@pytest.mark.django_db(transaction=True)
async def test_a_limit_refuses_new_bets_and_lets_bets_be_taken_back(table):
    s = await join(table)
    await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"})
    await ask(s, {"type": "set_limits", "client_id": "l1", "stake_limit": "40", "loss_limit": "45"})
    round = await db(writer.open_round)(table)
    assert (await ask(s, {"type": "place", "client_id": "p1", "box": 1, "amount": "30"}))["ok"]
    over = await ask(s, {"type": "place", "client_id": "p2", "box": 2, "amount": "15"})
    assert code(over) == "stake_limit_reached"
    assert (await ask(s, {"type": "place", "client_id": "p3", "box": 2, "amount": "10"}))["ok"]
    assert (await ask(s, {"type": "undo", "client_id": "u1"}))["ok"]
    await db(writer.expire)(round.pk, "betting")
    station = await db(Station.objects.get)(name="s1")
    # the round ends normally: 18 against 19, 30.00 lost
    await db(lambda: _finish(round.pk))()
    assert await db(ledger.balance)(station) == Decimal("70.00")

    await db(writer.open_round)(table)
    # lost 30.00 of a 45.00 loss limit: 15.00 may still be staked, not 15.01
    loss = await ask(s, {"type": "place", "client_id": "p4", "box": 1, "amount": "15.01"})
    assert code(loss) == "loss_limit_reached"
    assert (await ask(s, {"type": "place", "client_id": "p5", "box": 1, "amount": "15"}))["ok"]
    assert (await ask(s, {"type": "clear", "client_id": "p6"}))["ok"]
    reached = await db(
        lambda: list(
            ProtectionEvent.objects.filter(kind="limit_reached").values_list("detail", flat=True)
        )
    )()
    assert [d["code"] for d in reached] == ["stake_limit_reached", "loss_limit_reached"]
    # nothing of a refused bet was written
    state = (await ask(s, {"type": "state", "client_id": "q"}))["state"]
    assert state["bets"] == [] and state["credits"] == "70.00"


def _finish(round_id: int) -> None:
    """Deal the round: s1's 18 stands against the dealer's 19."""
    for card in "TS 9H 8D TC".split():
        if "s1" in writer.state(round_id).prompted_stations:
            writer.record(round_id, Decision("s1", "stand"))
        writer.record(round_id, CardDrawn(parse_card(card)))
    if "s1" in writer.state(round_id).prompted_stations:
        writer.record(round_id, Decision("s1", "stand"))


@pytest.mark.django_db(transaction=True)
async def test_the_jurisdictions_maxima_apply_whatever_the_player_set(table):
    await db(Jurisdiction.objects.filter(code="pp").update)(
        max_stake_per_round=Decimal("20"), max_session_minutes=60
    )
    s = await join(table)
    started = (await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"}))["state"]
    assert started["session"]["maxima"] == {"stake_limit": "20.00", "time_limit": 60}
    await db(writer.open_round)(table)
    over = await ask(s, {"type": "place", "client_id": "p1", "box": 1, "amount": "25"})
    assert code(over) == "stake_limit_reached" and "jurisdiction" in over["error"]["message"]
    assert (await ask(s, {"type": "place", "client_id": "p2", "box": 1, "amount": "20"}))["ok"]

    # an hour later: the session is too long to bet; bets already down can be taken back
    await db(PlayerSession.objects.update)(opened_at=timezone.now() - timedelta(minutes=60))
    state = (await ask(s, {"type": "state", "client_id": "q"}))["state"]
    assert state["session"]["stopped"] == "time_limit_reached"
    late = await ask(s, {"type": "place", "client_id": "p3", "box": 2, "amount": "1"})
    assert code(late) == "time_limit_reached"
    assert (await ask(s, {"type": "clear", "client_id": "p4"}))["ok"]
    # a player's time limit above the jurisdiction's changes nothing
    await ask(s, {"type": "set_limits", "client_id": "l1", "time_limit": 600})
    again = await ask(s, {"type": "place", "client_id": "p5", "box": 1, "amount": "1"})
    assert code(again) == "time_limit_reached"


def _deal_until_asked(round_id: int, cards: list[str]) -> list[str]:
    """Deal cards until s1 is asked a question; the cards left."""
    while cards and "s1" not in writer.state(round_id).prompted_stations:
        writer.record(round_id, CardDrawn(parse_card(cards.pop(0))))
    return cards


async def _an_hour_ago() -> None:
    await db(PlayerSession.objects.update)(opened_at=timezone.now() - timedelta(minutes=61))


@pytest.mark.django_db(transaction=True)
async def test_a_reality_check_never_lands_inside_a_round_and_holds_bets_until_answered(table):
    await db(Jurisdiction.objects.filter(code="pp").update)(reality_check_minutes=60)
    s = await join(table)
    session = (await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"}))["state"][
        "session"
    ]
    check = session["reality_check"]
    assert check["interval"] == 60 and check["open"] is False
    assert check["due_at"] > session["started_at"]

    round = await db(writer.open_round)(table)
    assert (await ask(s, {"type": "place", "client_id": "p1", "box": 1, "amount": "10"}))["ok"]
    await db(writer.expire)(round.pk, "betting")
    left = await db(_deal_until_asked)(round.pk, "TS 9H 8D TC".split())
    asked = (await ask(s, {"type": "state", "client_id": "q1"}))["state"]
    assert asked["table"]["station"]["prompt"]["kind"] == "decision"
    deadline = asked["round"]["deadline"]
    assert deadline is not None

    # the check falls due in the middle of the round: it waits, the decision's timer runs on
    await _an_hour_ago()
    during = (await ask(s, {"type": "state", "client_id": "q2"}))["state"]
    assert during["session"]["reality_check"]["open"] is False
    assert during["round"]["deadline"] == deadline
    assert during["table"]["station"]["prompt"]["kind"] == "decision"
    decided = await ask(s, {"type": "decide", "client_id": "d1", "action": "stand"})
    assert decided["ok"], decided
    await db(_deal_until_asked)(round.pk, left)  # the dealer's 19 stands: settled

    # settled: now the check opens, once, with the session's figures
    after = (await ask(s, {"type": "state", "client_id": "q3"}))["state"]
    assert after["round"]["phase"] == "settled"
    assert after["session"]["reality_check"]["open"] is True
    assert after["session"]["net"] == "-10.00" and after["session"]["staked"] == "10.00"
    await ask(s, {"type": "state", "client_id": "q4"})
    shown = await db(
        lambda: list(
            ProtectionEvent.objects.filter(kind="reality_check_shown").values_list(
                "detail", flat=True
            )
        )
    )()
    assert len(shown) == 1 and shown[0]["net"] == "-10.00" and shown[0]["staked"] == "10.00"

    await db(writer.open_round)(table)
    held = await ask(s, {"type": "place", "client_id": "p2", "box": 1, "amount": "5"})
    assert code(held) == "reality_check_pending"
    bad = await s.ask({"type": "reality_check", "client_id": "a0", "answer": "later"}, valid=False)
    assert_valid(STATION_FRAME, bad)
    assert code(bad) == "bad_message"
    answered = (await ask(s, {"type": "reality_check", "client_id": "a1", "answer": "continue"}))[
        "state"
    ]
    assert answered["session"]["reality_check"]["open"] is False
    assert answered["session"]["reality_check"]["due_at"] > after["server_time"]
    assert (await ask(s, {"type": "place", "client_id": "p3", "box": 1, "amount": "5"}))["ok"]
    again = await ask(s, {"type": "reality_check", "client_id": "a2", "answer": "continue"})
    assert code(again) == "no_reality_check"
    assert await db(kinds)(table) == [
        "session_started",
        "reality_check_shown",
        "reality_check_answered",
    ]


@pytest.mark.django_db(transaction=True)
async def test_a_reality_check_answered_cash_out_ends_the_session(table):
    await db(Jurisdiction.objects.filter(code="pp").update)(reality_check_minutes=60)
    s = await join(table)
    await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"})
    await _an_hour_ago()
    assert (await ask(s, {"type": "state", "client_id": "q"}))["state"]["session"]["reality_check"][
        "open"
    ]
    out = await ask(s, {"type": "reality_check", "client_id": "a1", "answer": "cash_out"})
    assert out["state"]["session"] is None and out["state"]["credits"] == "0.00"
    answers = await db(
        lambda: list(
            ProtectionEvent.objects.filter(kind="reality_check_answered").values_list(
                "detail", flat=True
            )
        )
    )()
    assert [a["answer"] for a in answers] == ["cash_out"]
    assert await db(kinds)(table) == [
        "session_started",
        "reality_check_shown",
        "reality_check_answered",
        "session_ended",
    ]


@pytest.mark.django_db(transaction=True)
async def test_a_break_cashes_out_and_refuses_cash_in_and_bets_until_it_ends(table):
    s = await join(table)
    await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"})
    round = await db(writer.open_round)(table)
    assert (await ask(s, {"type": "place", "client_id": "p1", "box": 1, "amount": "5"}))["ok"]
    held = await ask(s, {"type": "take_break", "client_id": "t0", "minutes": 30})
    assert code(held) == "bets_on_table"
    assert (await ask(s, {"type": "clear", "client_id": "p2"}))["ok"]
    for client_id, minutes in [("t1", 0), ("t2", 43201), ("t3", "30"), ("t4", True)]:
        message = {"type": "take_break", "client_id": client_id, "minutes": minutes}
        reply = await s.ask(message, valid=False)
        assert_valid(STATION_FRAME, reply)
        assert code(reply) == "bad_message", minutes

    taken = (await ask(s, {"type": "take_break", "client_id": "t5", "minutes": 30}))["state"]
    assert taken["credits"] == "0.00" and taken["session"] is None
    until = taken["break"]["until"]
    assert taken["break"]["started_at"] < until
    refused = await ask(s, {"type": "cash_in", "client_id": "c2", "amount": "10"})
    assert code(refused) == "on_break" and until[:16] in refused["error"]["message"]
    again = await ask(s, {"type": "take_break", "client_id": "t6", "minutes": 5})
    assert code(again) == "on_break"
    assert (await ask(s, {"type": "state", "client_id": "q"}))["state"]["break"]["until"] == until
    await db(writer.expire)(round.pk, "betting")

    # the break is over: the station takes cash-ins again, and the end is logged once
    await db(StationBreak.objects.update)(until=timezone.now() - timedelta(seconds=1))
    back = (await ask(s, {"type": "cash_in", "client_id": "c3", "amount": "10"}))["state"]
    assert back["break"] is None and back["credits"] == "10.00"
    await ask(s, {"type": "state", "client_id": "q2"})
    assert await db(kinds)(table) == [
        "session_started",
        "session_ended",
        "break_started",
        "break_ended",
        "session_started",
    ]


@pytest.mark.django_db(transaction=True)
async def test_an_idle_station_asks_then_locks_betting_and_keeps_the_credits(table):
    await db(Jurisdiction.objects.filter(code="pp").update)(idle_minutes=10)
    s = await join(table)
    first = (await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"}))["state"]
    idle = first["session"]["inactivity"]
    assert idle["asking"] is False and idle["locked"] is False
    assert idle["asks_at"] < idle["locks_at"]

    async def idle_for(minutes: float) -> None:
        then = timezone.now() - timedelta(minutes=minutes)
        await db(PlayerSession.objects.update)(opened_at=then)
        await db(LedgerEntry.objects.update)(created_at=then)

    await idle_for(10.1)
    asking = (await ask(s, {"type": "state", "client_id": "q1"}))["state"]["session"]
    assert asking["inactivity"]["asking"] is True and asking["inactivity"]["locked"] is False
    await idle_for(11.5)
    locked = (await ask(s, {"type": "state", "client_id": "q2"}))["state"]
    assert locked["session"]["inactivity"]["locked"] is True
    assert locked["credits"] == "100.00"  # credits stay
    await db(writer.open_round)(table)
    refused = await ask(s, {"type": "place", "client_id": "p1", "box": 1, "amount": "5"})
    assert code(refused) == "inactivity_locked"
    # the floor manager's view: the session is marked locked
    assert await db(PlayerSession.objects.filter(locked_at__isnull=False).count)() == 1

    back = (await ask(s, {"type": "still_here", "client_id": "h1"}))["state"]
    assert back["session"]["inactivity"]["locked"] is False
    assert (await ask(s, {"type": "place", "client_id": "p2", "box": 1, "amount": "5"}))["ok"]
    assert await db(PlayerSession.objects.filter(locked_at__isnull=False).count)() == 0
    assert await db(kinds)(table) == [
        "session_started",
        "inactivity_locked",
        "inactivity_answered",
    ]
    await ask(s, {"type": "clear", "client_id": "p3"})
    await ask(s, {"type": "cash_out", "client_id": "o1"})
    nobody = await ask(s, {"type": "still_here", "client_id": "h2"})
    assert code(nobody) == "no_session"


@pytest.mark.django_db(transaction=True)
async def test_an_abandoned_hand_played_by_basic_strategy_is_shown_to_the_station(table):
    await db(Jurisdiction.objects.filter(code="pp").update)(abandoned_hands="basic_strategy")
    s = await join(table)
    await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"})
    round = await db(writer.open_round)(table)
    bets = [{"box": 1, "bet": "main", "amount": "10"}, {"box": 2, "bet": "main", "amount": "10"}]
    assert (await ask(s, {"type": "place_many", "client_id": "p1", "bets": bets}))["ok"]
    await db(writer.expire)(round.pk, "betting")
    left = await db(_deal_until_asked)(round.pk, "5H TC 3C 6D 2D TS 4H 9S 9H".split())
    await db(_time_out)(round.pk)  # nobody answers: the chart doubles 11 against 3
    left = await db(_deal_until_asked)(round.pk, left)
    await db(_time_out)(round.pk)  # and hits 12
    await db(_deal_until_asked)(round.pk, left)
    await s.settle()
    for frame in s.frames:
        assert_valid(STATION_FRAME, frame)
    automatic = [(e["hand"]["box"], e["automatic"]) for e in s.events("hand") if "automatic" in e]
    assert automatic == [(1, "double"), (2, "hit")]
    state = (await ask(s, {"type": "state", "client_id": "q"}))["state"]
    assert state["credits"] == "130.00"


def _time_out(round_id: int) -> None:
    step = Round.objects.get(pk=round_id).step_key
    writer.expire(round_id, step)


@pytest.mark.django_db(transaction=True)
async def test_recall_lists_the_stations_own_last_games_from_the_log_and_the_ledger(table):
    other = Station(table=table, name="s2")
    await db(other.save)()
    await db(cash_in)(other, "50", key="start")
    s = await join(table)
    await ask(s, {"type": "cash_in", "client_id": "c1", "amount": "100"})
    station = await db(Station.objects.get)(name="s1")
    # a round lost (s1 stands on 18 against 19; s2 shares box 1) and a round won
    await db(play)(
        table,
        [(station, 1, "main", "30"), (other, 1, "main", "5")],
        "TS 9H 8D TC",
        [("s1", "stand"), ("s2", "stand")],
    )
    await db(play)(table, [(station, 1, "main", "10")], "TS 7H 9D TC", [("s1", "stand")])
    reply = await ask(s, {"type": "recall", "client_id": "r1"})
    assert reply["ok"] and reply["state"]["credits"] == "80.00"
    games = reply["recall"]["games"]
    assert reply["recall"]["most"] == 10
    assert [g["credits_before"] for g in games] == ["70.00", "100.00"]  # newest first
    assert [g["credits_after"] for g in games] == ["80.00", "70.00"]
    won, lost = games
    assert won["bets"] == [
        {"box": 1, "bet": "main", "stake": "10.00", "combination": None, "returned": None}
    ]  # a main bet's return is its hands'
    assert won["hands"] == [
        {"box": 1, "cards": ["TS", "9D"], "stake": "10.00", "result": "win", "returned": "20.00"}
    ]
    assert [(c["card"], c["to"]) for c in won["cards"]] == [
        ("TS", "box"),
        ("7H", "dealer_up"),
        ("9D", "box"),
        ("TC", "hole"),
    ]
    assert [(st["action"], st["by"]) for st in won["steps"]] == [("stand", "player")]
    assert won["dealer"]["total"] == 17
    # only s1's own wagers and steps, never s2's
    assert [b["stake"] for b in lost["bets"]] == ["30.00"]
    assert [(st["action"], st["by"]) for st in lost["steps"]] == [("stand", "player")]
    assert (await ask(s, {"type": "state", "client_id": "q"}))["state"]["credits"] == "80.00"
