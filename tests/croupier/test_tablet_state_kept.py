"""The croupier tablet's state of a round that is over is kept while nothing changes it: the
tablet asks for its state after every change of bets of the next round, which shows the
last round beside them, and a replay of that round each time is what a stadium's tablet
cannot afford. A record appended to the round (here a discarded card) is in the next state."""

from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from croupier.tablet_state import croupier_state
from rounds import writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from rounds.models import RoundEvent
from stations.commands import handle, place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

# Transactions of their own: what the tablet keeps is kept once what it read is committed.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=8).to_dict())
    for name in ("s1", "s2"):
        station = Station.objects.create(table=table, name=name)
        cash_in(station, "50", key="start")
    return table


def _log_reads(queries: CaptureQueriesContext, round_id: int) -> int:
    """The statements that read the round's event log."""
    return sum(
        'FROM "rounds_roundevent"' in q["sql"] and f'"round_id" = {round_id}' in q["sql"]
        for q in queries.captured_queries
    )


def test_a_settled_rounds_tablet_state_is_kept_until_a_record_changes_it(table):
    stations = {s.name: s for s in table.stations.all()}
    first = writer.open_round(table)
    place_bets(stations["s1"], [(1, "main", Decimal("10"))])
    place_bets(stations["s2"], [(2, "main", Decimal("5"))])
    writer.close_bets(first.pk)
    for card in "TS 9C 9D 9S TH 8C".split():  # boxes 1 and 2: 19 each; dealer 9, 8 in the hole
        writer.record(first.pk, CardDrawn(parse_card(card)))
    for name in ("s1", "s2"):
        assert handle(stations[name], {"type": "decide", "action": "stand", "client_id": "d"})["ok"]
    first.refresh_from_db()
    assert first.phase == "settled"
    second = writer.open_round(table)
    place_bets(stations["s2"], [(3, "main", Decimal("5"))])

    with CaptureQueriesContext(connection) as replayed:
        state = croupier_state(table)
    with CaptureQueriesContext(connection) as kept:
        again = croupier_state(table)
    assert (_log_reads(replayed, first.pk), _log_reads(kept, first.pk)) == (1, 0)
    assert again["previous"] is state["previous"]  # the same, read only
    assert {k: v for k, v in again.items() if k != "now"} == {
        k: v for k, v in state.items() if k != "now"
    }
    previous = state["previous"]
    assert (previous["id"], previous["phase"], previous["dealer"]) == (
        first.pk,
        "settled",
        {"cards": ["9D", "8C"], "total": 17, "blackjack": False, "bust": False},
    )
    assert [(s["station"], s["done"]) for s in previous["stations"]] == [
        ("s1", True),
        ("s2", True),
    ]
    assert [c["card"] for c in previous["cards"]] == ["TS", "9C", "9D", "9S", "TH", "8C"]
    # The round being bet: its stations and boxes as bet so far, read afresh.
    current = again["round"]
    assert (current["id"], current["stations"], current["boxes_bet"]) == (
        second.pk,
        [{"station": "s2", "done": False, "hands": 0}],
        [3],
    )

    with transaction.atomic():  # a card found on the floor, logged with the last round
        locked = writer.locked_round(first.pk)
        assert locked is not None
        payload = {"card": "2S", "reason": "on the floor", "by": "pit boss"}
        writer.append_record(locked, RoundEvent.Kind.DISCARD, payload)
        locked.save(update_fields=["last_seq"])
    changed = croupier_state(table)["previous"]
    assert [(d["card"], d["reason"]) for d in changed["discarded"]] == [("2S", "on the floor")]
    assert state["previous"]["discarded"] == []  # the kept one was not changed in place
