"""Receipt time decides (issue "Stadium scale", item 1): a decision that reached the server
before the step's deadline is applied as sent, however long it waited to be processed, and
the step's expiry waits for it; one that arrived after the deadline gets the timeout action
and a ``too_late`` error. Also: prompts and steps carry their deadline and the server's
time, and ``ping`` answers with the server's time.

The server's database thread is held back by the test (every database call of the consumers
queues behind a gate the test holds), as a burst of hundreds of answers would hold it."""

import asyncio
import threading
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.utils import timezone

from rounds import receipts, writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from rounds.models import Round, RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import (
    ask,
    consumers_connection_closed,  # noqa: F401 (autouse, see there)
)

ORIGIN = [(b"origin", b"http://127.0.0.1")]
STATIONS = 12
DECISION_SECONDS = 3  # the joins and the held-back sends fit well inside it


@pytest.fixture
def table(transactional_db):
    return make_table(DECISION_SECONDS)


def make_table(decision_seconds: float) -> Table:
    """Table t1: twelve stations with 100.00 each, decisions timed ``decision_seconds``."""
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        timers={"betting": 30, "decision": decision_seconds, "play": decision_seconds},
    )
    for n in range(STATIONS):
        station = Station(table=table, name=f"s{n:02d}")
        station.set_credential("secret")
        station.save()
        cash_in(station, "100", key="start")
    return table


def deal_to_the_first_decision(table: Table) -> Round:
    """Every station bets 10 on box 1 (common draw): 10 6 against a dealer 9, all asked."""
    round = writer.open_round(table)
    for station in table.stations.order_by("name"):
        place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in "TS 9D 6H 7C".split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    return Round.objects.get(pk=round.pk)


async def join(table: Table, name: str) -> tuple[WebsocketCommunicator, list]:
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/station/", headers=ORIGIN)
    connected, _ = await ws.connect()
    assert connected
    frames: list = []
    message = {"type": "join", "client_id": "j", "station": name, "credential": "secret"}
    assert (await ask(ws, frames, message))["ok"]
    return ws, frames


async def reply_to(ws: WebsocketCommunicator, client_id: str) -> dict:
    """The reply to ``client_id``, past the events that come before it."""
    while True:
        frame = await ws.receive_json_from(timeout=10)
        if frame.get("type") == "reply" and frame.get("client_id") == client_id:
            return frame


class HeldBack:
    """Holds the server's database thread: every database call queued after ``hold`` waits
    until ``release``."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.holding = threading.Event()

    def _wait(self) -> None:
        self.holding.set()
        self.gate.wait(30)

    async def hold(self) -> asyncio.Task:
        task = asyncio.ensure_future(database_sync_to_async(self._wait)())
        while not self.holding.is_set():
            await asyncio.sleep(0.01)
        return task

    def release(self) -> None:
        self.gate.set()


def expire_from_elsewhere(round_id: int, step_key: str) -> list:
    """The step's timer firing in another process (a Celery worker): a thread of its own
    with its own database connection, not the held-back server thread."""
    result: list = []

    def run() -> None:
        try:
            result.extend(writer.expire(round_id, step_key))
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    return result


async def wait_until(moment: datetime) -> None:
    """Until after ``moment`` and every process's next register snapshot after it."""
    grace = 2 * receipts.PUBLISH_SECONDS
    await asyncio.sleep(max((moment - timezone.now()).total_seconds(), 0) + grace + 0.05)


@pytest.mark.django_db(transaction=True)
async def test_answers_received_before_the_deadline_are_applied_however_late(table):
    # Joined first: the decision's timer starts at the deal (joins on a loaded machine are slow).
    sockets = [await join(table, f"s{n:02d}") for n in range(STATIONS)]
    round = await database_sync_to_async(deal_to_the_first_decision)(table)
    assert round.deadline is not None
    step_key = round.step_key
    held = HeldBack()
    server = await held.hold()
    for n, (ws, _frames) in enumerate(sockets):  # every station answers, all in time
        await ws.send_json_to({"type": "decide", "action": "stand", "client_id": f"d{n}"})
    await asyncio.sleep(0.1)  # the frames are in: stamped, queued behind the gate
    assert timezone.now() < round.deadline
    await wait_until(round.deadline)
    # The deadline has passed; the step's timer fires in another process: it must wait.
    assert await asyncio.to_thread(expire_from_elsewhere, round.pk, step_key) == []
    held.release()
    await server
    replies = []
    for n, (ws, _frames) in enumerate(sockets):
        replies.append(await reply_to(ws, f"d{n}"))
    assert [r["ok"] for r in replies] == [True] * STATIONS, [r for r in replies if not r["ok"]]
    events = await database_sync_to_async(
        lambda: list(
            RoundEvent.objects.filter(round_id=round.pk, kind__in=["decision", "timeout"])
            .order_by("seq")
            .values_list("kind", "payload")
        )
    )()
    assert [kind for kind, _ in events] == ["decision"] * STATIONS  # and no timeout
    assert sorted(p["station"] for _, p in events) == [f"s{n:02d}" for n in range(STATIONS)]
    assert {p["action"] for _, p in events} == {"stand"}
    for ws, _frames in sockets:
        await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_answer_received_after_the_deadline_is_too_late_and_the_timeout_answers(table):
    round = await database_sync_to_async(deal_to_the_first_decision)(table)
    assert round.deadline is not None
    ws, frames = await join(table, "s00")
    await wait_until(round.deadline)
    reply = await ask(ws, frames, {"type": "decide", "action": "hit", "client_id": "late"})
    assert not reply["ok"]
    assert reply["error"]["code"] == "too_late"
    assert reply["error"]["deadline"] == round.deadline.isoformat()
    assert datetime.fromisoformat(reply["error"]["received_at"]) > round.deadline
    kinds = await database_sync_to_async(
        lambda: list(
            RoundEvent.objects.filter(round_id=round.pk, seq__gt=round.last_seq)
            .order_by("seq")
            .values_list("kind", flat=True)
        )
    )()
    assert kinds[0] == "timeout"  # the table's timeout answered for every station
    assert "decision" not in kinds
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_prompts_and_steps_carry_their_deadline_and_the_servers_time(table):
    ws, frames = await join(table, "s00")
    round = await database_sync_to_async(deal_to_the_first_decision)(table)
    while await ws.receive_nothing(timeout=0.3) is False:
        frames.append(await ws.receive_json_from())
    timed = [f["event"] for f in frames if f.get("event", {}).get("type") in ("prompt", "step")]
    assert {e["type"] for e in timed} == {"prompt", "step"}
    for event in timed:
        assert event["deadline"] == round.deadline.isoformat()
        sent = datetime.fromisoformat(event["server_time"])
        assert abs((timezone.now() - sent).total_seconds()) < 5
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_ping_answers_with_the_servers_time_before_and_after_joining(table):
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/station/", headers=ORIGIN)
    assert (await ws.connect())[0]
    await ws.send_json_to({"type": "ping", "client_id": "p1"})
    reply = await ws.receive_json_from(timeout=5)
    assert reply["ok"] and reply["client_id"] == "p1"
    assert abs((timezone.now() - datetime.fromisoformat(reply["server_time"])).total_seconds()) < 5
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_answer_that_waited_while_its_step_timed_out_is_too_late(table):
    round = await database_sync_to_async(deal_to_the_first_decision)(table)
    assert round.deadline is not None
    ws, frames = await join(table, "s00")
    held = HeldBack()
    server = await held.hold()
    await wait_until(round.deadline)
    await ws.send_json_to({"type": "decide", "action": "hit", "client_id": "late"})
    await asyncio.sleep(0.1)  # received after the deadline, waiting behind the held thread
    # The timer, in another process, finds no answer received in time: the timeout answers.
    assert await asyncio.to_thread(expire_from_elsewhere, round.pk, round.step_key) != []
    held.release()
    await server
    reply = await reply_to(ws, "late")
    assert reply["error"]["code"] == "too_late"  # not "not_your_turn": its step timed out
    assert datetime.fromisoformat(reply["error"]["received_at"]) > round.deadline
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_answer_that_waited_while_its_round_timed_out_and_ended_is_too_late(table):
    """Received after the deadline and handled once the timeout has ended the round and bets
    are open for the next: still ``too_late``, not ``not_your_turn``."""
    round = await database_sync_to_async(deal_to_the_first_decision)(table)
    ws, frames = await join(table, "s00")
    held = HeldBack()
    server = await held.hold()
    await wait_until(round.deadline)
    await ws.send_json_to({"type": "decide", "action": "hit", "client_id": "late"})
    await asyncio.sleep(0.1)  # received after the deadline, waiting behind the held thread

    def time_out_and_finish() -> str:
        try:
            assert writer.expire(round.pk, round.step_key) != []  # every station stands
            writer.record(round.pk, CardDrawn(parse_card("5D")))  # the dealer's 9 7 5
            return Round.objects.get(pk=round.pk).phase
        finally:
            connection.close()

    assert await asyncio.to_thread(time_out_and_finish) == "settled"
    held.release()
    await server
    reply = await reply_to(ws, "late")
    assert reply["error"]["code"] == "too_late"
    assert datetime.fromisoformat(reply["error"]["received_at"]) > round.deadline
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_an_answer_queued_behind_its_stations_previous_command_is_stamped_on_arrival(
    table,
):
    """The answer reaches the server before the deadline while its station's consumer is
    still busy with the station's previous command: it waits in the connection's queue past
    the deadline, and is still on time (stamped as the server read it, before that queue:
    tablehub/frame_stamps.py), and the step's expiry waits for it meanwhile."""
    ws, _frames = await join(table, "s00")
    round = await database_sync_to_async(deal_to_the_first_decision)(table)
    assert round.deadline is not None
    held = HeldBack()
    server = await held.hold()
    await ws.send_json_to({"type": "state", "client_id": "c1"})  # the consumer waits on it
    await ws.send_json_to({"type": "decide", "action": "stand", "client_id": "d1"})
    await asyncio.sleep(0.1)
    assert timezone.now() < round.deadline
    await wait_until(round.deadline)
    assert await asyncio.to_thread(expire_from_elsewhere, round.pk, round.step_key) == []
    held.release()
    await server
    assert (await reply_to(ws, "c1"))["ok"]
    decided = await reply_to(ws, "d1")
    assert decided["ok"], decided
    events = await database_sync_to_async(
        lambda: list(
            RoundEvent.objects.filter(round_id=round.pk, kind__in=["decision", "timeout"])
            .order_by("seq")
            .values_list("kind", "payload")
        )
    )()
    assert events[0] == ("decision", {"station": "s00", "action": "stand", "hand": None})
    assert all(kind != "timeout" or p["station"] != "s00" for kind, p in events)
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_bet_received_after_the_betting_deadline_is_refused_while_the_close_waits(table):
    """Bets received in time are still being written when a bet received after the betting
    deadline is handled, in the same batch as one of them: the close waits for them, and the
    late bet is refused all the same."""
    names = ("s00", "s01", "s02")
    (first, _f1), (second, _f2), (late, _f3) = [await join(table, name) for name in names]
    round = await database_sync_to_async(writer.open_round)(table)
    await database_sync_to_async(
        lambda: Round.objects.filter(pk=round.pk).update(
            deadline=timezone.now() + timedelta(seconds=1)
        )
    )()
    round = await database_sync_to_async(Round.objects.get)(pk=round.pk)
    held = HeldBack()
    server = await held.hold()
    bet = {"type": "place", "box": 1, "bet": "main", "amount": "10"}
    await first.send_json_to(bet | {"client_id": "b1"})  # its batch waits at the gate
    await asyncio.sleep(0.1)
    await second.send_json_to(bet | {"client_id": "b2"})  # in time: the next batch
    await wait_until(round.deadline)
    await late.send_json_to(bet | {"client_id": "b3"})  # late: the same batch, after b2
    await asyncio.sleep(0.1)
    held.release()
    await server
    assert (await reply_to(first, "b1"))["ok"]
    assert (await reply_to(second, "b2"))["ok"]
    refused = await reply_to(late, "b3")
    assert not refused["ok"] and refused["error"]["code"] == "bets_closed", refused
    bets = await database_sync_to_async(
        lambda: sorted(round.bets.values_list("station__name", "stake"))
    )()
    assert bets == [("s00", Decimal("10.00")), ("s01", Decimal("10.00"))]
    for ws in (first, second, late):
        await ws.disconnect()


@pytest.mark.django_db  # the module's fixtures close the server's connections afterwards
def test_a_frame_never_taken_off_its_queue_holds_the_expiry_two_seconds_at_most():
    """A frame whose consumer is gone stays registered as queued: it holds the step's expiry
    only until QUEUED_HOLD_SECONDS after the deadline, and a frame read after the deadline
    never does."""
    deadline = timezone.now()
    receipts.queued(999_001, deadline.timestamp() - 0.05)  # never dequeued
    assert receipts.waiting_before(999_001, deadline, deadline + timedelta(seconds=1))
    later = deadline + timedelta(seconds=receipts.QUEUED_HOLD_SECONDS + 0.1)
    assert not receipts.waiting_before(999_001, deadline, later)
    receipts.queued(999_002, deadline.timestamp() + 0.05)  # read after the deadline
    assert not receipts.waiting_before(999_002, deadline, deadline + timedelta(seconds=1))
