"""Game recall (rounds/recall.py) through the API, station histories and ledgers."""

from decimal import Decimal

import pytest

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import CardDrawn, parse_card
from rounds.models import Round
from rounds.recall import recall
from rounds.voids import void_round
from stations.commands import place_bets
from tests.helpers import play

pytestmark = pytest.mark.django_db


@pytest.fixture
def stations(table):
    return table.stations.get(name="s1"), table.stations.get(name="s2")


@pytest.fixture
def split_round(table, stations):
    """s1: 10 on box 1 and 5 on 21+3; s2: 20 on box 1. Box 1 gets 8S 8H, the dealer 8D 9C.
    s1 splits, doubles 8S 3D into 21 with TS, stands on 8H 2C; s2 stands on 16."""
    s1, s2 = stations
    return play(
        table,
        [(s1, 1, "main", "10"), (s1, 1, "21+3", "5"), (s2, 1, "main", "20")],
        "8S 8D 8H 9C 3D TS 2C",
        [("s1", "split"), ("s2", "stand"), ("s1", "double"), ("s1", "stand")],
    )


def test_the_recall_of_a_round_to_the_cent(api, users, split_round, stations):
    s1, s2 = stations
    response = api(users["auditor"], "get", f"/api/rounds/{split_round.pk}/")
    assert response.status_code == 200
    data = response.json()
    assert data["round"]["phase"] == "settled" and data["config"]["version"] == 1
    assert data["config"]["special_bets"]["21+3"]["three_of_a_kind"] == 30
    assert [(b["station"], b["bet"], b["stake"], b["combination"], b["returned"])
            for b in data["bets"]] == [
        ("s1", "main", "10.00", None, None),
        ("s1", "21+3", "5.00", "three_of_a_kind", "155.00"),  # 8S 8H 8D pays 30 to 1
        ("s2", "main", "20.00", None, None),
    ]  # fmt: skip
    assert data["cards"] == [
        {"seq": 2, "card": "8S", "to": "box", "box": 1},
        {"seq": 3, "card": "8D", "to": "dealer_up"},
        {"seq": 4, "card": "8H", "to": "box", "box": 1},
        {"seq": 5, "card": "9C", "to": "hole"},
        {"seq": 8, "card": "3D", "to": "hands", "boxes": [1]},
        {"seq": 10, "card": "TS", "to": "hands", "boxes": [1]},
        {"seq": 11, "card": "2C", "to": "hands", "boxes": [1]},
    ]
    assert [(d["seq"], d["station"], d["action"]) for d in data["decisions"]] == [
        (6, "s1", "split"),
        (7, "s2", "stand"),
        (9, "s1", "double"),
        (12, "s1", "stand"),
    ]
    assert data["decisions"][2]["hands"][0]["stake"] == "20.00"  # the doubled hand
    assert data["timeouts"] == []
    assert data["dealer"] == {"cards": ["8D", "9C"], "total": 17, "blackjack": False,
                              "bust": False}  # fmt: skip
    assert [(h["station"], h["cards"], h["stake"], h["result"], h["returned"])
            for h in data["hands"]] == [
        ("s1", ["8S", "3D", "TS"], "20.00", "win", "40.00"),
        ("s1", ["8H", "2C"], "10.00", "lose", "0.00"),
        ("s2", ["8S", "8H"], "20.00", "lose", "0.00"),
    ]  # fmt: skip
    money = data["ledger"]
    assert (money["staked"], money["returned"], money["refunded"], money["house_result"]) == (
        "55.00", "195.00", "0.00", "-140.00",
    )  # fmt: skip
    station_entries = [e for e in money["entries"] if e["station"] == "s1"]
    assert sum(Decimal(e["amount"]) for e in station_entries) == Decimal("160.00")
    assert ledger.balance(s1) == Decimal("260.00") and ledger.balance(s2) == Decimal("80.00")
    assert data["interventions"] == []
    assert [e["kind"] for e in data["events"]][:2] == ["bets_closed", "card"]


def test_the_hole_card_stays_hidden_while_the_round_is_in_play(table, stations):
    s1, _ = stations
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in "TS 9C 9D 8H".split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    round.refresh_from_db()
    data = recall(round)
    assert data["cards"][-1] == {"seq": 5, "card": "face_down", "to": "hole"}
    assert data["events"][-1]["payload"] == {"card": "face_down"}
    assert "8H" not in repr(data)
    assert data["dealer"] == {"cards": ["9C"], "hole_card": "face_down"}


def test_a_void_is_in_the_recall_with_who_and_why(table, stations, api, users):
    s1, _ = stations
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    writer.record(round.pk, CardDrawn(parse_card("TS")))
    void_round(round.pk, by="sup", reason="card dropped", requested_by="dealer")
    data = api(users["auditor"], "get", f"/api/rounds/{round.pk}/").json()
    assert data["round"]["phase"] == "void"
    assert data["interventions"] == [
        {
            "seq": 3,
            "at": data["events"][-1]["at"],
            "kind": "void",
            "by": "sup",
            "reason": "card dropped",
            "requested_by": "dealer",
        }
    ]
    assert data["cards"] == [{"seq": 2, "card": "TS", "to": "box", "box": 1}]
    assert (data["ledger"]["staked"], data["ledger"]["refunded"]) == ("10.00", "10.00")
    assert data["ledger"]["house_result"] == "0.00"


def test_a_station_history_newest_first_with_its_own_money(api, users, table, stations):
    s1, s2 = stations
    first = play(table, [(s1, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    second = play(table, [(s2, 1, "main", "5")], "TS 9C 9D 8H", [("s2", "stand")])
    third = play(
        table, [(s1, 2, "main", "10"), (s2, 1, "main", "5")], "TS 9C 5D 8H 5C",
        [("s2", "stand"), ("s1", "stand")],
    )  # fmt: skip
    page = api(users["auditor"], "get", f"/api/stations/{s1.pk}/rounds/?page_size=1").json()
    assert page["count"] == 2 and page["next"].endswith("page=2&page_size=1")
    assert [r["id"] for r in page["results"]] == [third.pk]
    rows = api(users["auditor"], "get", f"/api/stations/{s1.pk}/rounds/").json()["results"]
    assert [(r["id"], r["staked"], r["returned"], r["net"]) for r in rows] == [
        (third.pk, "10.00", "0.00", "-10.00"),  # box 2: T 5 vs the dealer's 9 8: 15 loses
        (first.pk, "10.00", "20.00", "10.00"),
    ]
    assert second.pk not in [r["id"] for r in rows]
    table_rows = api(users["auditor"], "get", f"/api/tables/{table.pk}/rounds/").json()
    assert [r["id"] for r in table_rows["results"]] == [third.pk, second.pk, first.pk]
    assert table_rows["results"][0]["staked"] == "15.00"


def test_the_last_hundred_rounds_of_a_station_in_few_queries(
    client, users, table, stations, django_assert_max_num_queries
):
    s1, _ = stations
    config = table.current_config()
    rounds = Round.objects.bulk_create(
        [Round(table=table, number=n, config=config, phase="settled") for n in range(1, 131)]
    )
    LedgerEntry.objects.bulk_create(
        LedgerEntry(station=s1, round=r, kind="stake", amount=Decimal("-1"), key=f"k{r.pk}")
        for r in rounds
    )
    client.force_login(users["auditor"])
    with django_assert_max_num_queries(10):
        page = client.get(f"/api/stations/{s1.pk}/rounds/?page_size=100").json()
    assert page["count"] == 130 and len(page["results"]) == 100
    assert page["results"][0]["id"] == rounds[-1].pk and page["results"][0]["staked"] == "1.00"


def test_a_station_ledger_with_its_balance(api, users, split_round, stations):
    s1, _ = stations
    data = api(users["auditor"], "get", f"/api/stations/{s1.pk}/ledger/?page_size=3").json()
    assert data["balance"] == "260.00" and data["count"] == 7  # a cash-in, 4 stakes, 2 returns
    assert [e["kind"] for e in data["results"]] == ["return", "stake", "stake"]
    assert data["results"][-1]["amount"] == "-10.00"
