"""The stadium lobby over real websockets (docs/protocol.md, "Stadium lobby"): ``tables``
lists the stadium's tables, ``move_table`` moves the station between rounds with its credits
and closes the socket (4410), the station joins the other table; every refusal has its code
and changes nothing; every frame is valid against docs/protocol.schema.json."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import RuleSet
from stations.models import Station
from stations.services import cash_in
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Stadium, Table, TableConfig
from tests.helpers import (
    ask,
    consumers_connection_closed,  # noqa: F401 (autouse, see there)
)
from tests.test_protocol_contract import STATION_FRAME, STATION_MESSAGE, assert_valid

ORIGIN = [(b"origin", b"http://127.0.0.1")]


@pytest.fixture
def floor(transactional_db):
    stadium = Stadium.objects.create(name="Main floor")
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    tables = []
    for name, mode in (("A", Table.Mode.DEALER), ("B", Table.Mode.VIDEO)):
        table = Table.objects.create(
            name=name, jurisdiction=jurisdiction, stadium=stadium, is_open=True, mode=mode
        )
        TableConfig.objects.create(
            table=table,
            version=1,
            rules=RuleSet().to_dict(),
            limits={"main": ["1.00", "100.00"]},
        )
        tables.append(table)
    station = Station(table=tables[0], name="s1", stadium=stadium)
    station.set_credential("s1-secret")
    station.save()
    cash_in(station, "87.65", key="start")
    return stadium, tables[0], tables[1], station


async def join(table: Table, name: str = "s1", expect_ok: bool = True):
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/station/", headers=ORIGIN)
    connected, _ = await ws.connect()
    assert connected
    frames: list = []
    message = {"type": "join", "client_id": "j", "station": name, "credential": f"{name}-secret"}
    reply = await ask(ws, frames, message)
    assert reply["ok"] is expect_ok, reply
    return ws, frames, reply


async def send(ws, frames, **message):
    assert_valid(STATION_MESSAGE, message)
    reply = await ask(ws, frames, message)
    for frame in frames:
        assert_valid(STATION_FRAME, frame)
    return reply


async def move(ws, frames, client_id: str, table_id: int) -> tuple[dict, dict]:
    """A move that goes: its reply, then what closes the socket (read as it comes: the
    helper ``ask`` would read on past the reply)."""
    message = {"type": "move_table", "client_id": client_id, "table": table_id}
    assert_valid(STATION_MESSAGE, message)
    await ws.send_json_to(message)
    while True:
        output = await ws.receive_output(timeout=10)
        assert output["type"] == "websocket.send", output
        frame = json.loads(output["text"])
        assert_valid(STATION_FRAME, frame)
        frames.append(frame)
        if frame.get("type") == "reply" and frame.get("client_id") == client_id:
            return frame, await ws.receive_output(timeout=5)


def books() -> tuple[int, Decimal]:
    station = Station.objects.get(name="s1", stadium__isnull=False)
    return LedgerEntry.objects.count(), ledger.balance(station)


@pytest.mark.django_db(transaction=True)
async def test_tables_lists_the_stadiums_tables(floor):
    _stadium, a, b, _station = floor
    ws, frames, _ = await join(a)
    reply = await send(ws, frames, type="tables", client_id="t-1")
    assert reply["ok"]
    lines = {line["table"]: line for line in reply["tables"]}
    assert set(lines) == {"A", "B"}
    assert lines["A"]["here"] is True and lines["A"]["players"] == 1
    assert lines["B"]["mode"] == "video" and lines["B"]["players"] == 0
    assert lines["B"]["limits"] == {"main": ["1.00", "100.00"]}
    assert lines["B"]["play"] == "common_draw" and lines["B"]["open"] is True
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_move_table_is_refused_with_bets_then_moves_with_the_credits(floor):
    _stadium, a, b, _station = floor
    ws, frames, _ = await join(a)
    await database_sync_to_async(writer.open_round)(a)
    bet = await send(ws, frames, type="place", client_id="b-1", box=1, amount="10")
    assert bet["ok"]
    before = await database_sync_to_async(books)()
    refused = await send(ws, frames, type="move_table", client_id="m-1", table=b.pk)
    assert refused["error"]["code"] == "bets_unsettled"
    assert await database_sync_to_async(books)() == before
    assert (await send(ws, frames, type="clear", client_id="b-2"))["ok"]

    moved, closed = await move(ws, frames, "m-2", b.pk)
    assert moved["ok"], moved
    assert moved["moved"] == {
        "table_id": b.pk,
        "table": "B",
        "page": f"/tables/{b.pk}/stations/s1/",
    }
    assert moved["state"]["info"]["table_id"] == b.pk
    assert moved["state"]["credits"] == "87.65"
    assert closed == {"type": "websocket.close", "code": 4410}
    count, credits = await database_sync_to_async(books)()
    assert count == before[0] + 4 and credits == Decimal("87.65")

    # The station plays at B now: it joins there, and no longer at A.
    ws_b, frames_b, joined = await join(b)
    assert joined["state"]["credits"] == "87.65"
    assert joined["state"]["info"]["table_id"] == b.pk
    again = await send(ws_b, frames_b, type="move_table", client_id="m-2", table=b.pk)
    assert again["resent"] is True and again["moved"]["table_id"] == b.pk
    assert (await database_sync_to_async(books)())[0] == count  # moved once
    ws_a, _frames, refused_join = await join(a, expect_ok=False)
    assert refused_join["error"]["code"] == "unauthorized"
    await ws_a.disconnect()
    await ws_b.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_stations_idle_socket_at_the_old_table_is_closed_at_once(floor):
    _stadium, a, b, _station = floor
    first, frames, _ = await join(a)
    idle, _idle_frames, _ = await join(a)
    moved, closed = await move(first, frames, "m-1", b.pk)
    assert moved["ok"] and closed["code"] == 4410
    while True:  # the idle socket sends nothing: it is told by the station's change
        output = await idle.receive_output(timeout=5)
        if output["type"] == "websocket.close":
            break
    assert output == {"type": "websocket.close", "code": 4410}


@pytest.mark.django_db(transaction=True)
async def test_move_table_refusals_have_their_codes_and_change_nothing(floor):
    stadium, a, b, _station = floor

    def other_tables():
        elsewhere = Table.objects.create(
            name="C",
            jurisdiction=a.jurisdiction,
            stadium=Stadium.objects.create(name="Other floor"),
            is_open=True,
        )
        closed = Table.objects.create(name="D", jurisdiction=a.jurisdiction, stadium=stadium)
        euro = Table.objects.create(
            name="E", jurisdiction=a.jurisdiction, stadium=stadium, is_open=True, currency="EUR"
        )
        taken = Table.objects.create(
            name="F", jurisdiction=a.jurisdiction, stadium=stadium, is_open=True
        )
        Station.objects.create(table=taken, name="s1")
        nevada = Jurisdiction.objects.create(code="nv", name="Nevada")
        ruled = Table.objects.create(name="G", jurisdiction=nevada, stadium=stadium, is_open=True)
        return elsewhere, closed, euro, taken, ruled

    elsewhere, closed, euro, taken, ruled = await database_sync_to_async(other_tables)()
    ws, frames, _ = await join(a)
    before = await database_sync_to_async(books)()
    cases = [
        (elsewhere.pk, "not_in_stadium"),
        (999_999, "not_in_stadium"),
        (a.pk, "same_table"),
        (closed.pk, "table_closed"),
        (euro.pk, "other_currency"),
        (ruled.pk, "other_jurisdiction"),
        (taken.pk, "name_taken"),
    ]
    for n, (table_id, code) in enumerate(cases):
        reply = await send(ws, frames, type="move_table", client_id=f"m-{n}", table=table_id)
        assert reply["ok"] is False and reply["error"]["code"] == code, reply
    bad = await ask(ws, frames, {"type": "move_table", "client_id": "m-x", "table": "B"})
    assert bad["error"]["code"] == "bad_message"
    assert await database_sync_to_async(books)() == before
    station = await database_sync_to_async(Station.objects.get)(name="s1", table=a)
    assert station.table_id == a.pk
    await ws.disconnect()
