"""The card reader's HTTP input: the same scans as the websocket, clear errors, never a 500."""

from decimal import Decimal

import pytest

from rounds import writer
from rounds.engine import RuleSet
from rounds.models import RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    table.set_reader_key("reader")
    table.save()
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "50", key="start")
    round = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    return table


def post(client, table, body, key="reader", raw=None):
    return client.post(
        f"/api/tables/{table.pk}/shoe/cards/",
        data=raw if raw is not None else body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Reader {key}",
    )


def test_cards_posted_in_sequence(client, table):
    first = post(client, table, {"seq": 1, "card": "9S"})
    assert first.status_code == 200
    assert first.json() == {"type": "scan", "ok": True, "duplicate": False, "seq": 1}
    assert post(client, table, {"seq": 1, "card": "9S"}).json()["duplicate"] is True


@pytest.mark.parametrize(
    "body,code",
    [
        ({"seq": 2, "card": "9S"}, "sequence_gap"),
        ({"seq": 1, "card": "ZZ"}, "unreadable_card"),
        ({"seq": "one", "card": "9S"}, "bad_message"),
        ({"seq": 10**30, "card": "9S"}, "sequence_gap"),
        ({"card": "9S"}, "bad_message"),
    ],
)
def test_refused_scans_are_400_and_change_nothing(client, table, body, code):
    response = post(client, table, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert RoundEvent.objects.count() == 1  # only bets_closed


def test_a_wrong_key_is_401(client, table):
    response = post(client, table, {"seq": 1, "card": "9S"}, key="nope")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"9S"'])
def test_malformed_bodies_are_400(client, table, raw):
    response = post(client, table, None, raw=raw)
    assert response.status_code == 400
    assert RoundEvent.objects.count() == 1
