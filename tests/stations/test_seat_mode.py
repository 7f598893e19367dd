"""Seat mode over real websockets (issue "Seat mode and bet behind"): taking and leaving
seats, bets on a seat and behind it, the seat's turn, a bet behind following a double with
and without the credits for it, a seated player leaving mid-round. Every frame a station
gets is checked against the protocol's schema (docs/protocol.schema.json)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from payouts.specials.defaults import default_paytable_rows
from rounds import writer
from rounds.engine import EngineError, RuleSet
from rounds.models import Round
from stations import seats
from stations.models import Station, TableSeat
from stations.services import cash_in
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Play, Table, TableConfig
from tests.helpers import (
    ask,
    consumers_connection_closed,  # noqa: F401 (autouse, see there)
    drain,
)
from tests.test_protocol_contract import STATION_FRAME

ORIGIN = [(b"origin", b"http://127.0.0.1")]


@pytest.fixture
def table(transactional_db):
    jurisdiction = Jurisdiction.objects.create(
        code="nh", name="New Hampshire", special_bets_behind=["21+3"]
    )
    table = Table.objects.create(name="seats", jurisdiction=jurisdiction, boxes=3)
    table.set_reader_key("reader-secret")
    table.save()
    rows = default_paytable_rows()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        limits={"main": ["1", "100"], "special": ["1", "50"]},
        timers={"betting": 600, "insurance": 600, "play": 600},
        special_bets={code: rows[code]["pays"] for code in ("21+3", "pair")},
        play=Play.SEAT,
        behind_cap="25",
    )
    for name, credits in (("s1", "100"), ("s2", "100"), ("s3", "7")):
        station = Station(table=table, name=name)
        station.set_credential(f"{name}-secret")
        station.save()
        cash_in(station, credits, key="start")
    return table


class Player:
    """One station's socket and every frame it got, each checked against the schema."""

    def __init__(self, ws: WebsocketCommunicator, name: str) -> None:
        self.ws, self.name, self.sent = ws, name, 0
        self.frames: list[dict] = []

    async def say(self, message: dict) -> dict:
        self.sent += 1
        reply = await ask(self.ws, self.frames, {"client_id": f"c{self.sent}", **message})
        self.check()
        return reply

    async def listen(self) -> None:
        await drain(self.ws, self.frames, 0.1)
        self.check()

    def check(self) -> None:
        for frame in self.frames:
            errors = sorted(STATION_FRAME.iter_errors(frame), key=str)
            assert not errors, (frame, errors[0].message)

    def events(self, kind: str) -> list[dict]:
        return [
            f["event"] for f in self.frames if f["type"] == "event" and f["event"]["type"] == kind
        ]


async def join(table: Table, name: str) -> Player:
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/station/", headers=ORIGIN)
    connected, _ = await ws.connect()
    assert connected
    player = Player(ws, name)
    joined = await player.say({"type": "join", "station": name, "credential": f"{name}-secret"})
    assert joined["ok"], joined
    return player


def refused(reply: dict) -> str:
    assert not reply["ok"], reply
    return reply["error"]["code"]


async def scan(table: Table, cards: list[str], players: list[Player]) -> None:
    shoe = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/shoe/", headers=ORIGIN)
    assert (await shoe.connect())[0]
    await shoe.send_json_to({"type": "hello", "key": "reader-secret"})
    assert (await shoe.receive_json_from())["ok"]
    for card in cards:
        SEQ[table.pk] = SEQ.get(table.pk, 0) + 1
        await shoe.send_json_to({"type": "card", "seq": SEQ[table.pk], "card": card})
        reply = await shoe.receive_json_from()
        assert reply["ok"], reply
    await shoe.disconnect()
    for player in players:
        await player.listen()


SEQ: dict[int, int] = {}  # each table's reader sequence, carried on across a test's scans


@pytest.mark.django_db(transaction=True)
async def test_a_seat_is_taken_once_and_left_by_its_station_only(table):
    s1, s2 = await join(table, "s1"), await join(table, "s2")
    assert (await s1.say({"type": "take_seat", "box": 1}))["ok"]
    assert refused(await s2.say({"type": "take_seat", "box": 1})) == "seat_taken"
    assert refused(await s1.say({"type": "take_seat", "box": 2})) == "already_seated"
    assert refused(await s2.say({"type": "take_seat", "box": 4})) == "no_such_seat"
    assert refused(await s2.say({"type": "take_seat", "box": "2"})) == "bad_message"
    assert refused(await s2.say({"type": "leave_seat"})) == "not_seated"
    assert refused(await s2.say({"type": "set_follow", "follow": "yes"})) == "bad_message"
    await s2.listen()
    assert s2.events("seats")[-1]["seats"] == {"1": "s1"}
    state = (await s2.say({"type": "state"}))["state"]
    assert state["info"]["play"] == "seat"
    assert state["seating"] == {
        "seats": {"1": "s1"},
        "seat": None,
        "follow": False,
        "behind_cap": "25.00",
    }
    assert (await s1.say({"type": "leave_seat"}))["ok"]
    await s2.listen()
    assert s2.events("seats")[-1]["seats"] == {}
    seats = await database_sync_to_async(lambda: list(TableSeat.objects.all()))()
    assert seats == []


@pytest.mark.django_db(transaction=True)
async def test_bets_on_a_seat_and_behind_it_are_checked(table):
    s1, s2, s3 = await join(table, "s1"), await join(table, "s2"), await join(table, "s3")
    assert (await s1.say({"type": "take_seat", "box": 1}))["ok"]
    await database_sync_to_async(writer.open_round)(table)

    def place(box, amount, bet="main"):
        return {"type": "place", "box": box, "bet": bet, "amount": amount}

    assert refused(await s2.say(place(2, "10"))) == "empty_seat"
    assert (await s1.say(place(1, "10")))["ok"]
    assert (await s2.say(place(1, "20")))["ok"]  # behind seat 1
    assert refused(await s2.say(place(1, "5", "pair"))) == "not_allowed_behind"
    assert (await s2.say(place(1, "5", "21+3")))["ok"]  # allowed behind: 25.00 behind seat 1
    assert refused(await s3.say(place(1, "1"))) == "behind_cap"  # 26.00 behind seat 1
    assert (await s1.say(place(1, "5", "pair")))["ok"]  # the seat's own special bet
    assert refused(await s1.say({"type": "leave_seat"})) == "seat_has_bets"
    assert refused(await s2.say({"type": "take_seat", "box": 1})) == "seat_taken"
    bets = (await s2.say({"type": "state"}))["state"]["bets"]
    assert bets == [
        {"box": 1, "bet": "main", "stake": "20.00"},
        {"box": 1, "bet": "21+3", "stake": "5.00"},
    ]


async def _seated_round(table, follow_s2: bool = True):
    """s1 sits at seat 1 and bets 10.00; s2 (follows, credits to spare) and s3 (follows,
    2.00 left after its bet) bet behind it; the deal gives seat 1 5H 6D (11), the dealer
    9C up and 7S in the hole."""
    s1, s2, s3 = await join(table, "s1"), await join(table, "s2"), await join(table, "s3")
    assert (await s1.say({"type": "take_seat", "box": 1}))["ok"]
    assert (await s2.say({"type": "set_follow", "follow": follow_s2}))["ok"]
    assert (await s3.say({"type": "set_follow", "follow": True}))["ok"]
    round = await database_sync_to_async(writer.open_round)(table)
    for player, amount in ((s1, "10"), (s2, "10"), (s3, "5")):
        reply = await player.say({"type": "place", "box": 1, "bet": "main", "amount": amount})
        assert reply["ok"], reply
    await database_sync_to_async(writer.expire)(round.pk, "betting")
    await scan(table, ["5H", "9C", "6D", "7S"], [s1, s2, s3])
    return round, s1, s2, s3


@pytest.mark.django_db(transaction=True)
async def test_only_the_seat_decides_and_bets_behind_follow_its_double(table):
    round, s1, s2, s3 = await _seated_round(table)
    turn = {"box": 1, "station": "s1", "hand": "s1/1/1"}
    assert s2.events("step")[-1]["turn"] == turn  # everyone sees whose turn it is
    assert s1.events("prompt")[-1]["prompt"]["kind"] == "decision"
    assert s2.events("prompt") == []
    decide = {"type": "decide", "action": "double"}
    assert refused(await s2.say(decide)) == "not_your_turn"
    assert (await s1.say(decide))["ok"]
    await s2.listen()
    await s3.listen()
    followed = s2.events("hand")[-1]
    assert followed["seat_action"] == "double" and followed["hand"]["stake"] == "20.00"
    kept = s3.events("hand")[-1]  # follows, but 2.00 left: its bet stays as it was
    assert kept["seat_action"] == "double" and kept["hand"]["stake"] == "5.00"
    await scan(table, ["TD", "8C"], [s1, s2, s3])  # 21; the dealer's 16 draws 8C: bust
    settled = {p.name: p.events("settlement")[-1] for p in (s1, s2, s3)}
    assert settled["s1"]["credits"] == "120.00"
    assert settled["s2"]["credits"] == "120.00"
    assert settled["s3"]["credits"] == "12.00"
    assert [h["cards"] for h in settled["s3"]["hands"]] == [["5H", "6D", "TD"]]
    phase = await database_sync_to_async(lambda: Round.objects.get(pk=round.pk).phase)()
    assert phase == Round.Phase.SETTLED


@pytest.mark.django_db(transaction=True)
async def test_a_seated_player_who_leaves_mid_round_is_answered_for_at_once(table):
    round, s1, s2, s3 = await _seated_round(table, follow_s2=False)
    assert refused(await s2.say({"type": "take_seat", "box": 2})) == "round_in_play"
    assert (await s1.say({"type": "leave_seat"}))["ok"]
    for _ in range(50):  # the seat's step is timed out at once (the timeout action: stand)
        await s2.listen()
        if s2.events("round_over"):
            break
    assert s2.events("seat_left")[-1] == {"type": "seat_left", "box": 1, "station": "s1"}
    assert s2.events("seats")[-1]["seats"] == {}
    # 11 stands against the dealer's 16, which draws the next card: the round waits for it
    await scan(table, ["2C"], [s1, s2, s3])  # 18: seat 1's 11 loses
    settled = s2.events("settlement")[-1]
    assert settled["hands"][0]["result"] == "lose" and settled["credits"] == "90.00"


@pytest.mark.django_db(transaction=True)
async def test_a_bet_behind_a_seat_whose_main_bet_went_is_taken_off_at_the_close(table):
    s1, s2, s3 = await join(table, "s1"), await join(table, "s2"), await join(table, "s3")
    assert (await s1.say({"type": "take_seat", "box": 1}))["ok"]
    assert (await s3.say({"type": "take_seat", "box": 2}))["ok"]
    round = await database_sync_to_async(writer.open_round)(table)
    for player, box, amount in ((s1, 1, "10"), (s2, 1, "10"), (s3, 2, "5")):
        reply = await player.say({"type": "place", "box": box, "bet": "main", "amount": amount})
        assert reply["ok"], reply
    assert (await s1.say({"type": "clear"}))["ok"]  # the seat's own bet goes: nothing to follow
    await database_sync_to_async(writer.expire)(round.pk, "betting")
    await s2.listen()
    refusal = s2.events("bets_refused")[-1]
    assert refusal["code"] == "no_seat_bet"
    assert refusal["message"] == "station s2, box 1: seat 1 has no main bet to bet behind"
    state = (await s2.say({"type": "state"}))["state"]
    assert state["credits"] == "100.00" and state["bets"] == []
    assert state["round"]["phase"] == "deal"  # the round goes on with seat 2 alone
    assert state["table"]["seats"] == {"1": "s1", "2": "s3"}


@pytest.mark.django_db
def test_a_common_draw_table_has_no_seats():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="draw", jurisdiction=jurisdiction, boxes=3)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    station = Station.objects.create(table=table, name="s1")
    with pytest.raises(EngineError) as refusal:
        seats.take_seat(station, 1)
    assert refusal.value.code == "not_seat_mode"
    assert not TableSeat.objects.exists()
