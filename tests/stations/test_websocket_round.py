"""A whole round over real websockets: two stations and the card reader, through the ASGI app.

Checks every frame each station received (the hole card never before its reveal), the
credits to the cent, a resent message, a reconnect, and bad input at the door.
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from rounds import writer
from rounds.engine import RuleSet
from rounds.models import Round
from stations.models import Station
from stations.services import cash_in
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import (
    ask,
    consumers_connection_closed,  # noqa: F401 (autouse, see there)
    drain,
)

ORIGIN = [(b"origin", b"http://127.0.0.1")]


@pytest.fixture
def table(transactional_db):
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    table.set_reader_key("reader-secret")
    table.save()
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    for name in ("s1", "s2"):
        station = Station(table=table, name=name)
        station.set_credential(f"{name}-secret")
        station.save()
        cash_in(station, "100", key="start")
    return table


async def connect(path):
    communicator = WebsocketCommunicator(application, path, headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def join(table, name):
    ws = await connect(f"/ws/tables/{table.pk}/station/")
    frames = []
    reply = await ask(
        ws,
        frames,
        {"type": "join", "client_id": "j", "station": name, "credential": f"{name}-secret"},
    )
    assert reply["ok"], reply
    return ws, frames


@pytest.mark.django_db(transaction=True)
async def test_a_whole_round_over_websockets(table):
    s1, frames1 = await join(table, "s1")
    s2, frames2 = await join(table, "s2")
    round = await database_sync_to_async(writer.open_round)(table)

    assert (
        await ask(
            s1,
            frames1,
            {"type": "place", "client_id": "b1", "box": 1, "bet": "main", "amount": "10"},
        )
    )["ok"]
    assert (
        await ask(
            s2,
            frames2,
            {"type": "place", "client_id": "b1", "box": 2, "bet": "main", "amount": "10"},
        )
    )["ok"]
    await database_sync_to_async(writer.expire)(round.pk, "betting")

    shoe = await connect(f"/ws/tables/{table.pk}/shoe/")
    await shoe.send_json_to({"type": "hello", "key": "reader-secret"})
    assert (await shoe.receive_json_from())["ok"]

    async def scan(seq, card):
        await shoe.send_json_to({"type": "card", "seq": seq, "card": card})
        reply = await shoe.receive_json_from()
        assert reply["ok"], reply
        await drain(s1, frames1, 0.1)
        await drain(s2, frames2, 0.1)

    # box 1: 9S 7H (16); box 2: 8D 3C (11); dealer 6C up, QH in the hole.
    for seq, card in enumerate(["9S", "8D", "6C", "7H", "3C", "QH"], start=1):
        await scan(seq, card)
    hole_dealt = (len(frames1), len(frames2))

    stand = await ask(s1, frames1, {"type": "decide", "client_id": "d1", "action": "stand"})
    assert stand["ok"], stand
    double = await ask(s2, frames2, {"type": "decide", "client_id": "d1", "action": "double"})
    assert double["ok"], double
    again = await ask(s2, frames2, {"type": "decide", "client_id": "d1", "action": "double"})
    assert again["resent"] is True  # the same client id: not applied twice
    await scan(7, "TD")  # s2: 8 3 T = 21
    await scan(8, "2S")  # dealer 6 Q 2 = 18
    await drain(s1, frames1)
    await drain(s2, frames2)

    for frames in (frames1, frames2):
        reveal = next(
            i for i, f in enumerate(frames) if f.get("event", {}).get("type") == "hole_card"
        )
        assert "QH" not in json.dumps(frames[:reveal])  # never before the reveal
        assert frames[reveal]["event"] == {"type": "hole_card", "card": "QH"}
        ids = [f["id"] for f in frames if f.get("type") == "event"]
        assert len(ids) == len(set(ids))
    assert hole_dealt[0] < len(frames1)

    state1 = await ask(s1, frames1, {"type": "state", "client_id": "x1"})
    state2 = await ask(s2, frames2, {"type": "state", "client_id": "x1"})
    assert state1["state"]["credits"] == "90.00"  # 16 loses to 18
    assert state2["state"]["credits"] == "120.00"  # a doubled 21 wins 20
    assert state1["state"]["round"]["phase"] == "settled"

    await s1.disconnect()  # a reconnect gets the full state again
    s1, frames1 = await join(table, "s1")
    assert frames1[-1]["state"]["credits"] == "90.00"
    assert frames1[-1]["state"]["table"]["station"]["hands"][0]["result"] == "lose"
    for ws in (s1, s2, shoe):
        await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_bad_input_at_the_door_gets_an_error_and_changes_nothing(table):
    ws = await connect(f"/ws/tables/{table.pk}/station/")
    frames = []
    await ws.send_to(text_data="{not json")
    assert (await ws.receive_json_from())["error"]["code"] == "bad_json"
    await ws.send_json_to({"type": "place", "client_id": "1", "box": 1, "amount": "5"})
    assert (await ws.receive_json_from())["error"]["code"] == "not_joined"
    bad = await ask(
        ws, frames, {"type": "join", "client_id": "2", "station": "s1", "credential": "wrong"}
    )
    assert bad["error"]["code"] == "unauthorized"
    await ws.send_json_to([1, 2, 3])
    assert (await ws.receive_json_from())["error"]["code"] == "bad_message"
    await ws.disconnect()

    shoe = await connect(f"/ws/tables/{table.pk}/shoe/")
    await shoe.send_json_to({"type": "hello", "key": "nope"})
    assert (await shoe.receive_json_from())["error"]["code"] == "unauthorized"
    await shoe.disconnect()


@pytest.fixture
def table3(table):
    station = Station(table=table, name="s3")
    station.set_credential("s3-secret")
    station.save()
    cash_in(station, "100", key="start")
    return table


async def step_key(round_id):
    round = await database_sync_to_async(Round.objects.get)(pk=round_id)
    return round.step_key


@pytest.mark.django_db(transaction=True)
async def test_insurance_split_surrender_timeouts_and_a_disconnect(table3):
    table = table3
    s1, f1 = await join(table, "s1")
    s2, f2 = await join(table, "s2")
    s3, f3 = await join(table, "s3")
    round = await database_sync_to_async(writer.open_round)(table)
    for ws, frames, box in ((s1, f1, 1), (s2, f2, 2), (s3, f3, 3)):
        reply = await ask(
            ws, frames, {"type": "place", "client_id": "b", "box": box, "amount": "10"}
        )
        assert reply["ok"], reply
    await database_sync_to_async(writer.expire)(round.pk, "betting")
    late = await ask(s2, f2, {"type": "place", "client_id": "late", "box": 1, "amount": "5"})
    assert late["error"]["code"] == "bets_closed"

    shoe = await connect(f"/ws/tables/{table.pk}/shoe/")
    await shoe.send_json_to({"type": "hello", "key": "reader-secret"})
    assert (await shoe.receive_json_from())["ok"]
    seq = 0

    async def scan(*cards):
        nonlocal seq
        for card in cards:
            seq += 1
            await shoe.send_json_to({"type": "card", "seq": seq, "card": card})
            assert (await shoe.receive_json_from())["ok"]

    # s1 8S 8H, s2 TD 6C, s3 9C 7S; dealer AS up, 9H in the hole (soft 20, no blackjack).
    await scan("8S", "TD", "9C", "AS", "8H", "6C", "7S", "9H")
    assert (await ask(s1, f1, {"type": "decide", "client_id": "i", "action": "insure"}))["ok"]
    assert (await ask(s2, f2, {"type": "decide", "client_id": "i", "action": "no_insurance"}))["ok"]
    await s3.disconnect()  # s3 drops: its insurance question times out (declined)
    await database_sync_to_async(writer.expire)(round.pk, await step_key(round.pk))

    split = await ask(s1, f1, {"type": "decide", "client_id": "p1", "action": "split"})
    assert split["ok"], split
    surrender = await ask(s2, f2, {"type": "decide", "client_id": "p1", "action": "surrender"})
    assert surrender["ok"], surrender
    await database_sync_to_async(writer.expire)(round.pk, await step_key(round.pk))  # s3 stands
    await scan("3D")  # s1's first hand: 8 3 = 11
    assert (await ask(s1, f1, {"type": "decide", "client_id": "p2", "action": "double"}))["ok"]
    await scan("TC")  # 8 3 T = 21, doubled
    await scan("2C")  # the split hand: 8 2 = 10
    refused = await ask(s1, f1, {"type": "decide", "client_id": "p3", "action": "surrender"})
    assert refused["error"]["code"] == "not_allowed"  # no surrender after a split
    assert (await ask(s1, f1, {"type": "decide", "client_id": "p4", "action": "stand"}))["ok"]
    # The dealer's A 9 is a soft 20: it stands. s1: 21 wins 40, 10 loses; insurance lost.

    s3, f3 = await join(table, "s3")  # back: the round is over and its balance is right
    state3 = f3[-1]["state"]
    assert state3["credits"] == "90.00"
    assert state3["table"]["station"]["hands"][0]["result"] == "lose"
    state1 = await ask(s1, f1, {"type": "state", "client_id": "x"})
    state2 = await ask(s2, f2, {"type": "state", "client_id": "x"})
    assert state1["state"]["credits"] == "105.00"  # 100 - 10 - 5 - 10 - 10 + 40
    assert state2["state"]["credits"] == "95.00"  # surrender returns half
    hands = state1["state"]["table"]["station"]["hands"]
    assert [(h["cards"], h["stake"], h["result"]) for h in hands] == [
        (["8S", "3D", "TC"], "20.00", "win"),
        (["8H", "2C"], "10.00", "lose"),
    ]
    for ws in (s1, s2, s3, shoe):
        await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_servers_own_timers_close_bets_and_time_out_a_silent_table(table, settings):
    settings.TABLEHUB_TIMERS = "inprocess"  # the embedded server's timers, on its event loop
    await database_sync_to_async(TableConfig.objects.filter(table=table).update)(
        timers={"betting": 0.3, "decision": 0.3}
    )
    s1, frames = await join(table, "s1")
    round = await database_sync_to_async(writer.open_round)(table)
    assert (await ask(s1, frames, {"type": "place", "client_id": "b", "box": 1, "amount": "10"}))[
        "ok"
    ]
    shoe = await connect(f"/ws/tables/{table.pk}/shoe/")
    await shoe.send_json_to({"type": "hello", "key": "reader-secret"})
    assert (await shoe.receive_json_from())["ok"]
    # Nobody closes bets: the betting timer does (waited for, bounded: CI machines are slow).
    for _ in range(100):
        round = await database_sync_to_async(Round.objects.get)(pk=round.pk)
        if round.phase != Round.Phase.BETTING:
            break
        await asyncio.sleep(0.1)
    assert round.phase == Round.Phase.DEAL
    for seq, card in enumerate(["TS", "9C", "7H", "8C"], start=1):  # 17 against 17
        await shoe.send_json_to({"type": "card", "seq": seq, "card": card})
        assert (await shoe.receive_json_from(timeout=5))["ok"]  # a loaded machine is slow
    # s1 says nothing: the decision timer stands for it.
    for _ in range(100):
        await drain(s1, frames, 0.1)
        over = [f for f in frames if f.get("event", {}).get("type") == "round_over"]
        if over:
            break
    assert over and over[0]["event"]["dealer"]["total"] == 17
    settlement = [f for f in frames if f.get("event", {}).get("type") == "settlement"]
    assert settlement[0]["event"]["hands"][0]["result"] == "push"
    for ws in (s1, shoe):
        await ws.disconnect()
