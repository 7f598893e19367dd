"""Group commit (stations/batches.py): the messages that reach a table together are written
in one transaction, each with its own reply, idempotent by client_id within a batch and
across batches; a lone message on a quiet table is written at once; a batch that fails as a
whole costs no other message its answer."""

import asyncio
import json
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import CardDrawn, parse_card
from rounds.models import RoundEvent
from stations import batches, commands
from stations.models import Station, StationCommand
from tablehub import broadcast
from tablehub.fanout import CROUPIER, PUBLIC, STATION, table_group
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)
from tests.stations.test_receipt_time import (  # the same table: twelve stations on box 1
    STATIONS,
    HeldBack,
    deal_to_the_first_decision,
    join,
    make_table,
    reply_to,
)


@pytest.fixture
def table(transactional_db):
    """The receipt-time tests' table, with a decision timer that no join or held-back write
    of these tests outlasts on a loaded machine (none of them is about the deadline)."""
    return make_table(25)  # the jurisdiction's longest


@pytest.mark.django_db(transaction=True)
async def test_messages_that_arrive_together_are_one_batch_each_with_its_own_reply(table):
    await database_sync_to_async(deal_to_the_first_decision)(table)
    sockets = [await join(table, f"s{n:02d}") for n in range(STATIONS)]
    s00_again, _ = await join(table, "s00")  # the same station on a second socket
    batch = batches.table_batch(table.pk)
    written_before = len(batch.sizes)
    held = HeldBack()
    server = await held.hold()
    s00, s01 = sockets[0][0], sockets[1][0]
    await s00.send_json_to({"type": "decide", "action": "stand", "client_id": "a"})
    await s00_again.send_json_to({"type": "decide", "action": "stand", "client_id": "a"})
    await s01.send_json_to({"type": "decide", "action": "fly", "client_id": "b"})  # refused
    for n, (ws, _frames) in enumerate(sockets[2:], start=2):
        await ws.send_json_to({"type": "decide", "action": "hit", "client_id": f"c{n}"})
    await asyncio.sleep(0.2)  # every frame is in, waiting behind the held database thread
    held.release()
    await server
    first, again = await reply_to(s00, "a"), await reply_to(s00_again, "a")
    refused = await reply_to(s01, "b")
    others = [await reply_to(ws, f"c{n}") for n, (ws, _) in enumerate(sockets[2:], start=2)]
    assert first["ok"] and "resent" not in first
    assert again["ok"] and again["resent"] is True  # the same client_id within the batch
    assert again["state"] == first["state"]
    assert not refused["ok"] and refused["error"]["code"] == "unknown_action"
    assert [r["ok"] for r in others] == [True] * (STATIONS - 2)
    # The first batch takes the messages in when the writer starts (it then waits behind the
    # held database thread); every message that came meanwhile is in the second: two
    # transactions for thirteen messages.
    sizes = batch.sizes[written_before:]
    assert sum(sizes) == STATIONS + 1 and len(sizes) <= 2, sizes
    decisions = await database_sync_to_async(
        lambda: list(
            RoundEvent.objects.filter(kind="decision")
            .order_by("seq")
            .values_list("payload__station", "payload__action")
        )
    )()
    # In receipt order: the consumers read the frames in turn, not necessarily as sent.
    assert sorted(decisions) == [("s00", "stand")] + [
        (f"s{n:02d}", "hit") for n in range(2, STATIONS)
    ]
    # Across batches too: the same client_id again is answered from the stored reply.
    await s00.send_json_to({"type": "decide", "action": "stand", "client_id": "a"})
    assert (await reply_to(s00, "a"))["resent"] is True
    assert batch.sizes[-1] == 1  # a lone message on a quiet table is written at once
    for ws, _frames in sockets:
        await ws.disconnect()
    await s00_again.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_batchs_replies_go_out_before_the_events_its_commit_caused(table):
    """The commit of a batch is answered first and told to the table right after: a station
    that hits gets its reply (the state already the new one), then its hand's event, the
    same hand (docs/protocol.md lets the reply come before or after)."""
    await database_sync_to_async(deal_to_the_first_decision)(table)
    s00, _frames = await join(table, "s00")
    await s00.send_json_to({"type": "decide", "action": "hit", "client_id": "h"})
    first = await s00.receive_json_from(timeout=10)
    second = await s00.receive_json_from(timeout=10)
    assert (first["type"], first["client_id"], first["ok"]) == ("reply", "h", True)
    (hand,) = first["state"]["table"]["station"]["hands"]
    assert second["type"] == "event" and second["event"] == {"type": "hand", "hand": hand}
    assert hand["cards"] == ["TS", "6H"]  # common draw: the card comes with everyone's
    await s00.disconnect()


@pytest.mark.django_db(transaction=True)
def test_a_batch_that_fails_as_a_whole_answers_every_other_message(table, monkeypatch):
    """A message that fails with something other than a refusal (a fault, injected here)
    undoes its batch; each other message is then written alone and answered."""
    dispatch = commands._dispatch

    def failing_for_y(station, message, at):
        if message["client_id"] == "y":
            raise RuntimeError("injected fault")
        dispatch(station, message, at)

    monkeypatch.setattr(commands, "_dispatch", failing_for_y)
    s00, s01 = Station.objects.filter(table=table).order_by("name")[:2]
    now = timezone.now()
    messages = asyncio.run(_messages([(s00, "x"), (s01, "y"), (s00, "z")], now))
    results = batches.write(messages)
    assert [r["ok"] for r in (results[0], results[2])] == [True, True]
    assert isinstance(results[1], RuntimeError)
    assert StationCommand.objects.filter(station__name="s00").count() == 2
    assert not StationCommand.objects.filter(station__name="s01").exists()


@pytest.mark.django_db(transaction=True)
def test_a_message_of_a_station_gone_meanwhile_is_refused_and_the_others_written(table):
    """The session check is part of the batch (one query): a station deactivated or removed
    after it joined gets ``unauthorized``, unwritten, and the batch goes on."""
    s00, s01 = Station.objects.filter(table=table).order_by("name")[:2]
    ghost = Station(pk=10**6, table=table, name="ghost", credential="x")  # no row
    Station.objects.filter(pk=s01.pk).update(is_active=False)
    now = timezone.now()
    messages = asyncio.run(_messages([(s00, "x"), (ghost, "y"), (s01, "w"), (s00, "z")], now))
    results = batches.write(messages)
    assert [r["ok"] for r in results] == [True, False, False, True]
    assert [r["error"]["code"] for r in results[1:3]] == ["unauthorized", "unauthorized"]
    assert [r["client_id"] for r in results] == ["x", "y", "w", "z"]
    assert StationCommand.objects.filter(station__name="s00").count() == 2
    assert not StationCommand.objects.filter(station__name="s01").exists()


async def _messages(sent: list[tuple[Station, str]], now) -> list[batches.Message]:
    """Batch messages (``state`` asks) built in an event loop, as a server's are."""
    return [batches.Message(s, {"type": "state", "client_id": c}, now) for s, c in sent]


async def _listening_to(table) -> tuple[Any, str, list[Station]]:
    """The channel layer, a channel in the table's group (as a process's hub is) and the
    table's stations by name; the database thread sends through this test's loop."""
    broadcast.remember_server_loop()
    layer = get_channel_layer()
    assert layer is not None
    listener = await layer.new_channel()
    await layer.group_add(table_group(table.pk), listener)
    stations = await database_sync_to_async(
        lambda: list(Station.objects.filter(table=table).select_related("table").order_by("name"))
    )()
    return layer, listener, stations


@pytest.mark.django_db(transaction=True)
async def test_a_batch_says_what_its_commit_caused_in_one_message_to_the_table(table):
    """Every station's own event of a batch, and the public one its last answer caused, go
    to the table's hubs as one channel-layer message after the commit, in the order written."""
    await database_sync_to_async(deal_to_the_first_decision)(table)
    layer, listener, stations = await _listening_to(table)
    now = timezone.now()
    batch = [
        batches.Message(station, {"type": "decide", "action": "hit", "client_id": "h"}, now)
        for station in stations
    ]
    results = await database_sync_to_async(batches.write)(batch)
    assert [r["ok"] for r in results] == [True] * STATIONS
    message = await asyncio.wait_for(layer.receive(listener), 5)
    frames = [(audience, to, json.loads(text)["event"]) for audience, to, text in message["frames"]]
    own = [(to, event["hand"]["cards"]) for audience, to, event in frames if audience == STATION]
    assert own == [(f"s{n:02d}", ["TS", "6H"]) for n in range(STATIONS)]
    public = [event for audience, _to, event in frames if audience == PUBLIC]
    assert public == [{"type": "dealer", "prompt": "draw a card", "card_for": "hands"}]
    with pytest.raises(asyncio.TimeoutError):  # nothing more: one message for the commit
        await asyncio.wait_for(layer.receive(listener), 0.3)
    await layer.group_discard(table_group(table.pk), listener)


@pytest.mark.django_db(transaction=True)
async def test_a_batch_of_bets_tells_the_croupier_once_that_bets_changed(table):
    """Every bet of a batch changes bets; the croupier's tablet, told so, reads its state,
    which holds them all: one ``changed`` frame for the batch's send, not one per bet. A
    later batch tells it again."""
    await database_sync_to_async(writer.open_round)(table)
    layer, listener, stations = await _listening_to(table)
    now = timezone.now()

    async def croupier_frames(batch: list[batches.Message]) -> list[dict]:
        results = await database_sync_to_async(batches.write)(batch)
        assert all(isinstance(r, dict) and r["ok"] for r in results)
        message = await asyncio.wait_for(layer.receive(listener), 5)
        return [
            json.loads(text) for audience, _to, text in message["frames"] if audience == CROUPIER
        ]

    placed = [batches.Message(s, _place(f"p{s.name}", "10.00"), now) for s in stations]
    assert await croupier_frames(placed) == [{"type": "changed", "what": "bets"}]
    undone = [batches.Message(stations[0], {"type": "undo", "client_id": "u"}, now)]
    assert await croupier_frames(undone) == [{"type": "changed", "what": "bets"}]
    await layer.group_discard(table_group(table.pk), listener)


@pytest.mark.django_db(transaction=True)
def test_a_refused_answer_leaves_the_engine_to_the_batch_and_costs_no_replay(table):
    """The engine refuses before changing anything, so the next message of the batch goes
    on with it: no message after a refusal reads the round's event log again."""
    round = deal_to_the_first_decision(table)
    stations = {s.name: s for s in Station.objects.filter(table=table).select_related("table")}
    answers = [("s00", "fly", "a"), ("s01", "hit", "b"), ("s00", "hit", "c")]

    async def build() -> list[batches.Message]:
        now = timezone.now()
        return [
            batches.Message(stations[name], {"type": "decide", "action": a, "client_id": c}, now)
            for name, a, c in answers
        ]

    messages = asyncio.run(build())
    with CaptureQueriesContext(connection) as queries:
        results = batches.write(messages)
    assert [r["ok"] for r in results] == [False, True, True]
    assert results[0]["error"]["code"] == "unknown_action"
    log_reads = [q["sql"] for q in queries if 'FROM "rounds_roundevent"' in q["sql"]]
    assert log_reads == []
    decisions = RoundEvent.objects.filter(round=round, kind="decision").order_by("seq")
    assert [(d.payload["station"], d.payload["action"]) for d in decisions] == [
        ("s01", "hit"),
        ("s00", "hit"),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_client_id_of_any_json_type_is_refused_alone_in_its_batch(table):
    """A client_id that is not a string (a list, an object: unhashable) is refused with
    ``bad_message``, and the rest of its batch is written as if it were not there."""
    s00 = Station.objects.select_related("table").get(table=table, name="s00")
    round = writer.open_round(table)
    contents = [
        {"type": "place", "box": 1, "amount": "10", "client_id": ["a"]},
        {"type": "place", "box": 1, "amount": "10", "client_id": {"b": 1}},
        {"type": "place", "box": 1, "amount": "10", "client_id": "c"},
    ]

    async def build() -> list[batches.Message]:
        now = timezone.now()
        return [batches.Message(s00, content, now) for content in contents]

    results = batches.write(asyncio.run(build()))
    assert [r["ok"] if isinstance(r, dict) else r for r in results] == [False, False, True]
    assert [r["error"]["code"] for r in results[:2]] == ["bad_message", "bad_message"]
    assert list(round.bets.values_list("station__name", "stake")) == [("s00", Decimal("10.00"))]
    assert list(StationCommand.objects.values_list("client_id", flat=True)) == ["c"]


@pytest.mark.django_db(transaction=True)
def test_an_action_of_any_json_type_is_refused_alone_in_its_batch(table):
    """A decision's action that is not a string (a list, an object: unhashable) is refused
    (``bad_message``), and the rest of its batch, a double among it, is written."""
    deal_to_the_first_decision(table)
    s00, s01, s02 = Station.objects.select_related("table").filter(table=table).order_by("name")[:3]
    now = timezone.now()
    sent = [
        (s00, {"type": "decide", "action": [], "client_id": "a"}, now),
        (s01, {"type": "decide", "action": {"double": 1}, "client_id": "b"}, now),
        (s02, {"type": "decide", "action": "double", "client_id": "c"}, now),
    ]
    results = batches.write(asyncio.run(_bets(sent)))
    assert [r["ok"] if isinstance(r, dict) else r for r in results] == [False, False, True]
    assert [r["error"]["code"] for r in results[:2]] == ["bad_message", "bad_message"]
    assert [ledger.balance(s) for s in (s00, s01, s02)] == [
        Decimal("90.00"),
        Decimal("90.00"),
        Decimal("80.00"),
    ]


async def _bets(sent: list[tuple[Station, dict, datetime]]) -> list[batches.Message]:
    """Batch messages of any kind, each with its own receipt time."""
    return [batches.Message(s, content, at) for s, content, at in sent]


def _place(client_id: str, amount: str) -> dict:
    return {"type": "place", "box": 1, "bet": "main", "amount": amount, "client_id": client_id}


@pytest.mark.django_db(transaction=True)
def test_a_batch_of_bets_writes_each_stations_last_bets_together_and_nothing_refused(table):
    """The bets of a batch wait in memory and are written at its end: one insert of slips and
    one of Bet rows for the whole batch, each station's last bets, nothing of a refused one
    (its savepoint drops it) and the replies as the commit leaves the bets."""
    round = writer.open_round(table)
    s00, s01, s02 = Station.objects.filter(table=table).order_by("name")[:3]
    now = timezone.now()
    sent = [
        (s00, _place("a", "10.00"), now),
        (s01, _place("b", "150.00"), now),  # refused: the credits are 100.00
        (s00, _place("c", "5.00"), now),
        (s02, _place("d", "20.00"), now),
        (s02, {"type": "undo", "client_id": "e"}, now),
        (s01, _place("f", "30.00"), now),
    ]
    with CaptureQueriesContext(connection) as captured:
        results = batches.write(asyncio.run(_bets(sent)))
    assert [r["ok"] for r in results] == [True, False, True, True, True, True]
    assert results[1]["error"]["code"] == "insufficient_credits"
    inserts = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("INSERT INTO")]
    assert sum('"rounds_bet"' in sql for sql in inserts) == 1
    assert sum('"stations_betslip"' in sql for sql in inserts) == 1
    bets = round.bets.order_by("station__name").values_list("station__name", "box", "code", "stake")
    assert list(bets) == [
        ("s00", 1, "main", Decimal("15.00")),
        ("s01", 1, "main", Decimal("30.00")),
    ]
    slips = dict(round.slips.values_list("station__name", "groups"))
    assert slips == {
        "s00": [
            [{"box": 1, "bet": "main", "amount": "10.00"}],
            [{"box": 1, "bet": "main", "amount": "5.00"}],
        ],
        "s01": [[{"box": 1, "bet": "main", "amount": "30.00"}]],
        "s02": [],
    }
    assert results[2]["state"]["bets"] == [{"box": 1, "bet": "main", "stake": "15.00"}]
    assert results[4]["state"]["bets"] == []
    assert results[5]["state"]["bets"] == [{"box": 1, "bet": "main", "stake": "30.00"}]
    # Each reply was encoded once, when it was complete: the text its station is sent is
    # the reply, and the stored row holds the same.
    stored = dict(StationCommand.objects.values_list("client_id", "reply"))
    for client_id, result in zip("abcdef", results, strict=True):
        assert json.loads(commands.reply_text(result)) == result == stored[client_id]
    # A later batch reads the slips written: undo takes back s00's last chip.
    again = batches.write(asyncio.run(_bets([(s00, {"type": "undo", "client_id": "g"}, now)])))
    assert again[0]["state"]["bets"] == [{"box": 1, "bet": "main", "stake": "10.00"}]
    assert list(round.bets.order_by("station__name").values_list("station__name", "stake")) == [
        ("s00", Decimal("10.00")),
        ("s01", Decimal("30.00")),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_late_bet_in_a_batch_closes_bets_on_the_bets_before_it(table):
    """A bet received after the betting deadline applies the expiry first: the bets of the
    batch before it are written, closed and staked; the late one is refused."""
    round = writer.open_round(table)
    assert round.deadline is not None
    s00, s01 = Station.objects.filter(table=table).order_by("name")[:2]
    late = round.deadline + timedelta(seconds=1)
    sent = [(s00, _place("a", "10.00"), timezone.now()), (s01, _place("b", "10.00"), late)]
    results = batches.write(asyncio.run(_bets(sent)))
    assert results[0]["ok"]
    assert not results[1]["ok"] and results[1]["error"]["code"] == "bets_closed"
    round.refresh_from_db()
    assert round.phase != "betting"
    assert list(round.bets.values_list("station__name", "stake")) == [("s00", Decimal("10.00"))]
    credits = {s.name: ledger.balance(s) for s in (s00, s01)}
    assert credits == {"s00": Decimal("90.00"), "s01": Decimal("100.00")}


def _decisions(stations: list[Station], action: str, client_id: str) -> list[Any]:
    """One batch, each station deciding ``action``: the replies and the statements run."""
    now = timezone.now()
    message = {"type": "decide", "action": action, "client_id": client_id}
    with CaptureQueriesContext(connection) as captured:
        replies = batches.write(asyncio.run(_bets([(s, message, now) for s in stations])))
    return [replies, [q["sql"] for q in captured.captured_queries]]


@pytest.mark.django_db(transaction=True)
def test_a_batch_of_doubles_posts_its_stakes_together(table):
    """A double stakes more as it is made: a batch's doubles have their stations locked and
    their credits read once, and their entries wait to be written together with its events,
    one insert, linked in the ledger's chain in their order. Credits to the cent, the chain
    whole, the kept credits the entries' sum; a refused double writes nothing."""
    deal_to_the_first_decision(table)  # everyone bet 10.00 of 100.00: 16 against a 9
    # As a joined socket holds its station: the table and its jurisdiction read once.
    joined = Station.objects.filter(table=table).select_related("table__jurisdiction")
    stations = list(joined.order_by("name"))
    few, many = stations[:2], stations[2:8]
    (few_replies, few_sql), (many_replies, many_sql) = (
        _decisions(few, "double", "d1"),
        _decisions(many, "double", "d2"),
    )
    assert [r["ok"] for r in few_replies + many_replies] == [True] * 8
    # Before, each double locked its station, read its credits, moved the chain's head,
    # inserted its entries and added to its credits: five statements a double.
    assert len(many_sql) == len(few_sql)
    for sql in (few_sql, many_sql):
        assert sum(s.startswith('INSERT INTO "payouts_ledgerentry"') for s in sql) == 1
    # The station that doubled already asks for a card now: its second double is refused
    # and writes nothing; s08's, in the same batch, is written.
    again, _sql = _decisions([stations[0], stations[8]], "double", "d3")
    assert again[0]["error"]["code"] == "not_your_turn", again[0]
    assert again[1]["ok"], again[1]
    for station in stations:
        doubled = station in stations[:9]
        assert ledger.balance(station) == Decimal("80.00" if doubled else "90.00")
        stakes = LedgerEntry.objects.filter(station=station, kind=LedgerEntry.Kind.STAKE)
        assert sorted(stakes.values_list("amount", flat=True)) == (
            [Decimal("-10.00"), Decimal("-10.00")] if doubled else [Decimal("-10.00")]
        )
        assert ledger.balances([station.pk])[station.pk] == ledger.money(
            LedgerEntry.objects.filter(station=station).aggregate(total=Sum("amount"))["total"]
        )
    assert ledger.check() == []  # every chain whole, every kept credit its entries' sum


def _deal_everyone_twenty_against_seventeen(table) -> Any:
    """Every station bets 10.00 of its 100.00 on box 1 (common draw): a 20 against a dealer
    9 with an 8 in the hole, all asked; the dealer stands on 17 once they have answered."""
    round = writer.open_round(table)
    for station in table.stations.order_by("name"):
        commands.place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in "TS 9D TH 8C".split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    return round


def _public_events(said: broadcast.Said, table) -> list[str]:
    frames = said.get(table.pk, [])
    return [
        json.loads(text)["event"]["type"] for audience, _to, text in frames if audience == PUBLIC
    ]


@pytest.mark.django_db(transaction=True)
def test_the_decision_that_closes_its_step_starts_the_next_batch(table):
    """The answer the round waits for alone closes the step, here the whole round: the
    dealer stands and every box is settled. The messages before it in its batch are
    committed and answered first, without the settlement; it and the messages after it
    are the next batch, which settles. Credits to the cent at each commit."""
    round = _deal_everyone_twenty_against_seventeen(table)
    joined = Station.objects.filter(table=table).select_related("table__jurisdiction")
    stations = list(joined.order_by("name"))
    stand = {"type": "decide", "action": "stand", "client_id": "s"}
    now = timezone.now()
    sent = [(s, stand, now) for s in stations] + [
        (stations[0], {"type": "state", "client_id": "after"}, now)
    ]
    messages = asyncio.run(_bets(sent))

    first, said = batches.write_keeping_news(messages)
    assert [(r["ok"], r["client_id"]) for r in first] == [(True, "s")] * (STATIONS - 1)
    assert [r["state"]["round"]["phase"] for r in first] == ["play"] * (STATIONS - 1)
    round.refresh_from_db()
    assert (round.phase, round.settled_at) == ("play", None)
    decided = RoundEvent.objects.filter(round=round, kind="decision")
    assert sorted(decided.values_list("payload__station", flat=True)) == [
        f"s{n:02d}" for n in range(STATIONS - 1)
    ]
    assert {ledger.balance(s) for s in stations} == {Decimal("90.00")}  # the stakes only
    assert "round_over" not in _public_events(said, table)

    rest, said = batches.write_keeping_news(messages[STATIONS - 1 :])
    assert [(r["ok"], r["client_id"]) for r in rest] == [(True, "s"), (True, "after")]
    round.refresh_from_db()
    assert round.phase == "settled" and round.settled_at is not None
    assert "round_over" in _public_events(said, table)
    assert {ledger.balance(s) for s in stations} == {Decimal("110.00")}  # 20 beats 17: 1 to 1


@pytest.mark.django_db(transaction=True)
async def test_a_tables_batch_answers_before_the_decision_that_closes_the_step(table):
    """Through the table's batch, as the server writes: twelve stands that reach the table
    together are two transactions, the first eleven answered by the first, the last (the
    round waits for it alone) settling the round in the second; every reply is ``ok``."""
    await database_sync_to_async(_deal_everyone_twenty_against_seventeen)(table)
    stations = await database_sync_to_async(
        lambda: list(
            Station.objects.filter(table=table)
            .select_related("table__jurisdiction")
            .order_by("name")
        )
    )()
    batch = batches.table_batch(table.pk)
    written_before = len(batch.sizes)
    stand = {"type": "decide", "action": "stand", "client_id": "s"}
    now = timezone.now()
    replies = await asyncio.gather(
        *(batch.submit(batches.Message(s, stand, now)) for s in stations)
    )
    assert [r["ok"] for r in replies] == [True] * STATIONS
    assert batch.sizes[written_before:] == [STATIONS - 1, 1]
    assert [r["state"]["round"]["phase"] for r in replies] == ["play"] * (STATIONS - 1) + [
        "settled"
    ]


@pytest.mark.django_db(transaction=True)
def test_a_decision_while_bets_are_open_is_refused_alone_in_its_batch(table, caplog):
    """A decision sent while bets are open (no question is open) is refused with
    ``not_your_turn``, and the bets around it are written in the same transaction: asking
    whether it closes a step must not fail the batch."""
    round = writer.open_round(table)
    s00, s01 = Station.objects.select_related("table").filter(table=table).order_by("name")[:2]
    now = timezone.now()
    sent = [
        (s00, _place("a", "10.00"), now),
        (s01, {"type": "decide", "action": "stand", "client_id": "b"}, now),
        (s01, _place("c", "20.00"), now),
    ]
    with caplog.at_level("WARNING", logger="tablehub.stations"):
        results = batches.write(asyncio.run(_bets(sent)))
    assert [r["ok"] for r in results] == [True, False, True]
    assert results[1]["error"]["code"] == "not_your_turn"
    assert "failed" not in caplog.text  # one transaction, not each message alone
    bets = round.bets.order_by("station__name").values_list("station__name", "stake")
    assert list(bets) == [("s00", Decimal("10.00")), ("s01", Decimal("20.00"))]


@pytest.mark.parametrize(
    ("waiting", "sizes"),
    [
        (1, [1]),
        (32, [32]),  # SMALL_BATCH: one transaction
        (33, [17, 16]),
        (199, [100, 99]),  # half answered by the first commit, the rest by one more
        (512, [256, 256]),
        (513, [171, 171, 171]),
        (999, [250, 250, 250, 249]),  # the fewest batches of at most MAX_BATCH
    ],
)
def test_waiting_messages_are_cut_into_the_fewest_equal_batches_at_least_two(waiting, sizes):
    assert batches.cut(waiting) == sizes


@pytest.mark.django_db(transaction=True)
async def test_a_burst_is_written_in_the_batches_cut_when_it_arrived(table):
    """Forty bets that reach the table together are two transactions of twenty, not halves
    of what is left each time (20, 10, 5...): each batch costs its reads and its commit,
    and the last reply waits for every batch before it. Every bet is written, each reply
    as its commit left the station's bets."""
    await database_sync_to_async(writer.open_round)(table)
    stations = await database_sync_to_async(
        lambda: list(Station.objects.filter(table=table).select_related("table").order_by("name"))
    )()
    batch = batches.table_batch(table.pk)
    written_before = len(batch.sizes)
    now = timezone.now()
    sent = [
        batches.Message(
            stations[n % STATIONS], _place(f"p{n}", "1.00"), now + timedelta(microseconds=n)
        )
        for n in range(40)
    ]
    replies = await asyncio.gather(*(batch.submit(message) for message in sent))
    assert batch.sizes[written_before:] == [20, 20]
    assert [r["ok"] for r in replies] == [True] * 40
    # Message n is station n % 12's. A reply is the state its commit left: after the first,
    # s00 to s07 have bet twice and s08 to s11 once; after the second, s00 to s03 four times
    # and the others three.
    stakes = [r["state"]["bets"][0]["stake"] for r in replies]
    first = {f"s{n:02d}": "2.00" if n < 8 else "1.00" for n in range(STATIONS)}
    last = {f"s{n:02d}": "4.00" if n < 4 else "3.00" for n in range(STATIONS)}
    assert stakes[:20] == [first[stations[n % STATIONS].name] for n in range(20)]
    assert stakes[20:] == [last[stations[n % STATIONS].name] for n in range(20, 40)]
    written = await database_sync_to_async(
        lambda: dict(
            Station.objects.filter(table=table)
            .annotate(staked=Sum("bet__stake"))
            .values_list("name", "staked")
        )
    )()
    assert written == {f"s{n:02d}": Decimal("4.00" if n < 4 else "3.00") for n in range(STATIONS)}
