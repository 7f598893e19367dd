"""Every change is said (issue 19, point 2), over real websockets: a restarted betting
window's new deadline, a void's refund to each station with its amounts, the table closing
and opening, a new shoe, and a cash-out's receipt; every frame valid against the schema."""

from datetime import datetime

import pytest
from channels.db import database_sync_to_async

from croupier import tablet
from rounds import voids, writer
from rounds.models import Round
from stations.models import Station
from tests import test_protocol_contract as contract
from tests.helpers import play
from tests.test_protocol_contract import STATION_FRAME, assert_valid, join

# The contract test's table (disputes allowed, two stations with 100.00 each) and its fixture
# that closes the consumers' database connection after each test.
table = contract.table
_close_the_consumers_connection = contract._close_the_consumers_connection

db = database_sync_to_async
pytestmark = pytest.mark.django_db(transaction=True)


async def all_valid(*sockets) -> None:
    """Every frame each socket got is valid against the schema; then the sockets close (on
    the Redis channel layer an open one keeps the test's event loop from closing)."""
    for s in sockets:
        await s.ws.disconnect()
        for frame in s.frames:
            assert_valid(STATION_FRAME, frame)


async def test_a_restarted_betting_window_tells_its_new_deadline(table):
    s1, s2 = await join(table, "s1"), await join(table, "s2")
    round = await db(writer.open_round)(table)
    await s1.settle()
    first = (await db(Round.objects.get)(pk=round.pk)).deadline
    await db(writer.expire)(round.pk, "betting")  # nobody bet
    await s1.settle()
    await s2.settle()
    again = await db(Round.objects.get)(pk=round.pk)
    assert again.phase == Round.Phase.BETTING and again.deadline > first
    for s in (s1, s2):
        (restarted,) = s.events("betting_restarted")
        assert datetime.fromisoformat(restarted["deadline"]) == again.deadline
        assert restarted["window"] == 2 and "server_time" in restarted
    frame = next(f for f in s1.frames if f.get("event", {}).get("type") == "betting_restarted")
    opened = next(f for f in s1.frames if f.get("event", {}).get("type") == "phase")
    assert frame["round"] == round.pk and frame["id"] != opened["id"]  # never taken as old
    state = await s1.ask({"type": "state", "client_id": "st"})
    assert state["state"]["round"]["deadline"] == restarted["deadline"]

    await db(writer.expire)(round.pk, again.step_key)  # and again: the third window
    await s1.settle()
    assert [e["window"] for e in s1.events("betting_restarted")] == [2, 3]
    await all_valid(s1, s2)


async def test_a_void_tells_each_station_its_stakes_back(table):
    s1, s2 = await join(table, "s1"), await join(table, "s2")
    station = await db(Station.objects.get)(table=table, name="s1")
    # s1: 10 on the main bet and 5 on pair of box 1; the pair (8S 8H) pays 5 x 25 at the deal
    round = await db(play)(table, [(station, 1, "main", "10"), (station, 1, "pair", "5")],
                           "8S 6C 8H 9D")  # fmt: skip
    await s1.settle()
    await db(voids.void_round)(round.pk, by="sup", reason="a misdeal")
    await s1.settle()
    await s2.settle()
    assert [e["reason"] for e in s1.events("void")] == ["a misdeal"]
    (refunded,) = s1.events("refunded")
    paid = refunded["taken_back"]
    assert refunded == {
        "type": "refunded",
        "round": round.pk,
        "reason": "a misdeal",
        "staked": "15.00",
        "taken_back": paid,
        "refunded": f"{15 - float(paid):.2f}",
        "credits": "100.00",  # back where it was before the round
    }
    assert s2.events("void") and not s2.events("refunded")  # s2 had nothing in the round
    await all_valid(s1, s2)


async def test_closing_and_opening_the_table_and_a_new_shoe_are_said(table):
    s1 = await join(table, "s1")
    await db(tablet.open_table)(table)
    await db(tablet.new_shoe)(table)
    await db(tablet.close_table)(table, by="dealer")
    await db(tablet.close_table)(table, by="dealer")  # closed already: nothing more to say
    await s1.settle()
    assert s1.events("table_status") == [
        {"type": "table_status", "open": True},
        {"type": "table_status", "open": False},
    ]
    assert s1.events("shoe_changed") == [{"type": "shoe_changed", "decks": 8}]
    # closing with no bet on the betting round voids it, and says so first
    kinds = [f["event"]["type"] for f in s1.frames if f.get("type") == "event"]
    assert kinds.index("void") < kinds.index("table_status", kinds.index("shoe_changed"))
    await all_valid(s1)


async def test_a_cash_out_answers_with_its_receipt(table):
    s1 = await join(table, "s1")
    reply = await s1.ask({"type": "cash_out", "client_id": "out-1"})
    receipt = reply["receipt"]
    assert {k: receipt[k] for k in ("station", "table", "table_id", "amount", "currency")} == {
        "station": "s1", "table": "t1", "table_id": table.pk, "amount": "100.00",
        "currency": "USD",
    }  # fmt: skip
    assert reply["state"]["credits"] == "0.00"
    again = await s1.ask({"type": "cash_out", "client_id": "out-1"})
    assert again["resent"] and again["receipt"] == receipt  # the same receipt, paid once
    empty = await s1.ask({"type": "cash_out", "client_id": "out-2"})  # no credits left
    assert empty["receipt"]["amount"] == "0.00"
    await all_valid(s1)
