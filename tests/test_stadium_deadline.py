"""A stadium's decision step (issue "Stadium scale"): several hundred stations over real
websockets, on the real server in this process (daphne; the real channel layer, Redis in
CI), every station answering at a random moment in the last 300 ms before the step's
deadline, as players do. No answer received in time may be lost: every answer the server
received by the deadline is ``ok`` and in the round's log as sent, and each of those replies
leaves only after the commit that holds it; an answer is refused only as ``too_late``, and
only when the server received it after the deadline (this machine's 2 cores run the 300
clients beside the server: under load a frame can be read late, and then it is late)."""

import asyncio
import json
import random
import threading
from datetime import datetime
from decimal import Decimal

import pytest
import websockets
from django.conf import settings
from django.db import connection
from django.utils import timezone
from websockets.typing import Origin

from rounds import writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from rounds.models import Round, RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)

STATIONS = 300
DECISION_SECONDS = 4  # time for every station to be prompted before the window opens
WINDOW = 0.300  # every station answers in the last 300 ms
MARGIN = 0.100  # ... and at least 100 ms before it: 300 clients share this 2-core machine
# with the server, and a client's own wake-up can come some 50 ms late
ORIGIN = Origin("http://127.0.0.1")


@pytest.fixture
def stadium(in_process_timers, settings):
    from rounds.live_replay import in_process_server  # starts daphne (Twisted) once

    # No betting timer (bets close by hand here; one would outlive the test): the decision
    # step's timer is armed when the cards are dealt (``deal``).
    settings.TABLEHUB_TIMERS = "none"
    jurisdiction = Jurisdiction.objects.create(
        code="wa", name="Washington", max_decision_seconds=600
    )
    table = Table.objects.create(name="stadium", jurisdiction=jurisdiction)
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        # Bets close by hand: a betting step longer than placing 300 bets on a loaded machine.
        timers={"betting": 600, "decision": DECISION_SECONDS, "play": DECISION_SECONDS},
    )
    stations = []
    for n in range(STATIONS):
        station = Station(table=table, name=f"s{n:03d}")
        station.set_credential("secret")
        stations.append(station)
    Station.objects.bulk_create(stations)
    for station in table.stations.all():
        cash_in(station, "100", key="start")
    return in_process_server(), table


def committed(station: str, round_id: int) -> bool:
    """Whether the station's answer is committed, read on a connection of its own."""
    try:
        return RoundEvent.objects.filter(
            round_id=round_id, kind="decision", payload__station=station
        ).exists()
    finally:
        connection.close()


class Player:
    def __init__(self, url: str, table: Table, name: str) -> None:
        self.url, self.table, self.name = url, table, name
        self.joined: asyncio.Future = asyncio.get_running_loop().create_future()
        self.reply: dict | None = None
        self.sent_at: datetime | None = None
        self.committed_at_reply: bool | None = None

    async def play(self, round_ids: asyncio.Future, rng: random.Random) -> None:
        path = f"{self.url}/ws/tables/{self.table.pk}/station/"
        async with websockets.connect(path, origin=ORIGIN, open_timeout=30) as ws:
            join = {"type": "join", "client_id": "j", "station": self.name, "credential": "secret"}
            await ws.send(json.dumps(join))
            while json.loads(await ws.recv()).get("client_id") != "j":
                pass
            self.joined.set_result(True)
            async for text in ws:
                frame = json.loads(text)
                event = frame.get("event", {})
                if event.get("type") == "prompt" and event.get("prompt") and self.sent_at is None:
                    deadline = datetime.fromisoformat(event["deadline"])
                    offset = timezone.now() - datetime.fromisoformat(event["server_time"])
                    wait = (deadline - timezone.now() + offset).total_seconds()
                    await asyncio.sleep(max(wait - rng.uniform(MARGIN, WINDOW), 0))
                    self.sent_at = timezone.now()
                    decide = {"type": "decide", "action": "stand", "client_id": "d"}
                    await ws.send(json.dumps(decide))
                elif frame.get("type") == "reply" and frame.get("client_id") == "d":
                    self.reply = frame
                    round_id = await round_ids
                    self.committed_at_reply = await asyncio.to_thread(
                        committed, self.name, round_id
                    )
                    return


def deal(table: Table) -> Round:
    round = writer.open_round(table)
    for station in table.stations.order_by("name"):
        place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    settings.TABLEHUB_TIMERS = "inprocess"  # the decision step's own timer fires at its deadline
    for card in "TS 9D 6H 7C".split():  # 16 against a dealer 9: every station is asked
        writer.record(round.pk, CardDrawn(parse_card(card)))
    try:
        return Round.objects.get(pk=round.pk)
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
async def test_every_answer_in_the_last_300_ms_is_applied_and_none_is_lost(stadium):
    url, table = stadium
    rng = random.Random(16)
    loop = asyncio.get_running_loop()
    players = [Player(url, table, f"s{n:03d}") for n in range(STATIONS)]
    round_ids: asyncio.Future = loop.create_future()
    tasks = [asyncio.ensure_future(p.play(round_ids, rng)) for p in players]
    await asyncio.wait_for(asyncio.gather(*(p.joined for p in players)), 60)
    round = await asyncio.to_thread(deal, table)
    round_ids.set_result(round.pk)
    assert round.deadline is not None
    await asyncio.wait_for(asyncio.gather(*tasks), DECISION_SECONDS + 60)

    assert all(p.reply is not None and p.sent_at is not None for p in players)
    # A client that itself sent after the deadline (this loaded machine wakes it late) is
    # refused: the server cannot have read its frame any sooner.
    sent_late = [p for p in players if p.sent_at and p.sent_at > round.deadline]
    assert all(p.reply and p.reply["error"]["code"] == "too_late" for p in sent_late)
    in_time = [p for p in players if p.reply and p.reply["ok"]]
    refused = [p.reply["error"] for p in players if p.reply and not p.reply["ok"]]
    assert {error["code"] for error in refused} <= {"too_late"}
    for error in refused:  # the server's own stamp says it came after the deadline
        # (no "deadline" when its step timed out while it waited: see writer.TooLate)
        assert datetime.fromisoformat(error["received_at"]) > round.deadline
        assert error.get("deadline", round.deadline.isoformat()) == round.deadline.isoformat()
    assert len(in_time) > 0
    assert [p.name for p in in_time if not p.committed_at_reply] == []

    def the_log() -> list[tuple[str, dict]]:
        try:
            return list(
                RoundEvent.objects.filter(round_id=round.pk, kind__in=["decision", "timeout"])
                .order_by("seq")
                .values_list("kind", "payload")
            )
        finally:
            connection.close()

    events = await asyncio.to_thread(the_log)
    kinds = [kind for kind, _ in events]
    # Every answer received in time is applied before the step's timeout, which answers
    # only for the stations whose answers came too late (none, on a quiet machine).
    assert kinds == ["decision"] * len(in_time) + (["timeout"] if refused else [])
    decided = sorted(p["station"] for kind, p in events if kind == "decision")
    assert decided == [p.name for p in in_time]
    assert {p["action"] for kind, p in events if kind == "decision"} == {"stand"}
    assert threading.active_count() < 200  # the test's own threads were bounded
