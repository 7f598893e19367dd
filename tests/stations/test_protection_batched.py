"""A batch's replies read player protection together: with every protection of the
jurisdiction on (idle time, reality checks, a longest session, disputes with a window), the
statements a batch runs do not grow with its stations, and each reply's session and Dispute
button are what the station's own state shows."""

import asyncio
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from rounds import writer
from rounds.engine import CardDrawn, parse_card
from rounds.models import Round
from stations import batches, commands
from stations.commands import place_bets
from stations.models import Station
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)
from tests.stations.test_receipt_time import make_table

PLAYED = ["s00", "s01", "s02", "s03", "s04", "s05"]  # had a bet in the settled round


@pytest.fixture
def table(transactional_db):
    """Twelve stations; the first six played a round, settled a moment ago; a new round
    takes bets."""
    table = make_table(25)
    table.jurisdiction.__dict__.update(
        idle_minutes=10,
        reality_check_minutes=60,
        max_session_minutes=240,
        disputes_allowed=True,
        dispute_window_seconds=600,
    )
    table.jurisdiction.save()
    round = writer.open_round(table)
    for name in PLAYED:
        place_bets(Station.objects.get(table=table, name=name), [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in "TS 9D 6H 7C".split():  # box 1: 16 against the dealer's 9 and a hole card
        writer.record(round.pk, CardDrawn(parse_card(card)))
    for name in PLAYED:
        station = Station.objects.get(table=table, name=name)
        reply = commands.handle(station, {"type": "decide", "action": "stand", "client_id": "d"})
        assert reply["ok"], reply
    writer.record(round.pk, CardDrawn(parse_card("TD")))  # the dealer's 16 busts
    assert Round.objects.get(pk=round.pk).phase == Round.Phase.SETTLED
    writer.open_round(table)
    return table


async def _messages(sent: list[tuple[Station, dict[str, Any], datetime]]) -> list[Any]:
    return [batches.Message(station, content, at) for station, content, at in sent]


def _bets(stations: list[Station]) -> tuple[list[Any], int]:
    """Each station bets 5.00 in one batch: the replies and the statements it ran."""
    now = timezone.now()
    bet = {"type": "place", "box": 1, "bet": "main", "amount": "5.00", "client_id": "b"}
    with CaptureQueriesContext(connection) as captured:
        replies = batches.write(asyncio.run(_messages([(s, bet, now) for s in stations])))
    return replies, len(captured.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_a_batchs_replies_read_player_protection_together(table):
    settled = Round.objects.get(table=table, phase=Round.Phase.SETTLED)
    # As a joined socket holds its station: the table and its jurisdiction read once.
    joined = Station.objects.filter(table=table).select_related("table__jurisdiction")
    stations = list(joined.order_by("name"))
    few = [stations[0], stations[6], stations[7]]  # one that played, two that did not
    many = [s for s in stations if s not in few]
    few_replies, few_statements = _bets(few)
    many_replies, many_statements = _bets(many)
    # Before, each reply read when its station's money last moved, and each station with no
    # bet in the shown round its last round to dispute: 2 statements a station more.
    assert many_statements == few_statements
    for station, reply in zip(few + many, few_replies + many_replies, strict=True):
        assert reply["ok"], reply
        state = reply["state"]
        alone = commands.station_state(station, full=False)  # read for this station alone
        assert state["session"] == alone["session"]
        assert state["session"]["inactivity"]["asking"] is False
        assert state["session"]["reality_check"]["open"] is False
        assert state["dispute"] == alone["dispute"]
        if station.name in PLAYED:
            assert state["dispute"]["round"] == settled.pk
            assert state["dispute"]["halted"] is False
        else:
            assert state["dispute"] is None
