"""A station's credits kept in one row (payouts.models.StationCredits): equal to the sum of
its entries through every kind of movement, read in one row whatever the station's history,
added to (not read and written back) by two connections at once, filled by its migration
from the entries written before it, and named by ``check_ledger`` when changed behind the
ledger's back."""

import importlib
import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.apps import apps as django_apps
from django.db import connection, transaction
from django.db.models import F, Sum
from django.test.utils import CaptureQueriesContext

from payouts import ledger
from payouts.models import LedgerEntry, StationCredits
from rounds import corrections, voids
from rounds.engine import RuleSet
from stations.commands import handle
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Stadium, Table, TableConfig
from tests.helpers import play

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def tables():
    jurisdiction = Jurisdiction.objects.create(
        code="wa",
        name="Washington",
        disputes_allowed=True,
        dispute_window_seconds=60,
        tips_allowed=True,
    )
    stadium = Stadium.objects.create(name="Main floor")
    made = []
    for name in ("t1", "t2"):
        table = Table.objects.create(
            name=name, jurisdiction=jurisdiction, boxes=3, stadium=stadium, is_open=True
        )
        TableConfig.objects.create(
            table=table, version=1, rules=RuleSet().to_dict(), limits={"main": ["1", "100"]}
        )
        made.append(table)
    return made


def kept(station: Station) -> D:
    return ledger.meters.money(StationCredits.objects.get(pk=station.pk).cents)


def summed(station: Station) -> D:
    total = LedgerEntry.objects.filter(station=station).aggregate(total=Sum("amount"))["total"]
    return ledger.money(total)


def test_the_kept_credits_are_the_sum_of_the_entries_through_every_movement(tables):
    t1, t2 = tables
    s1 = Station.objects.create(table=t1, name="s1", stadium=t1.stadium)
    s2 = Station.objects.create(table=t1, name="s2")
    assert ledger.balance(s1) == D("0.00")  # no entry, no row
    cash_in(s1, "100.00", key="in")
    cash_in(s2, "50.00", key="in")
    # s1 wins 12.35 (T T against 19 ... 20), s2 loses 10.10.
    bets = [(s1, 1, "main", "12.35"), (s2, 2, "main", "10.10")]
    stand = [("s1", "stand"), ("s2", "stand")]
    won = play(t1, bets, "TS TC 9C TD 7D 9D", stand)
    assert (kept(s1), kept(s2)) == (D("112.35"), D("39.90"))
    # A correction: s1's second card was a 6: 16 loses to the dealer's 18.
    corrections.correct_cards(won.pk, [{"position": 4, "card": "6D"}], by="sup")
    assert kept(s1) == D("87.65")
    voided = play(t1, bets, "TS TC 9C TD 7D 9D", stand)
    voids.void_round(voided.pk, by="sup", reason="a disputed result")
    assert (kept(s1), kept(s2)) == (D("87.65"), D("39.90"))
    tipped = handle(s1, {"type": "tip", "client_id": "tip", "amount": "1.15"})
    assert tipped["ok"], tipped
    assert kept(s1) == D("86.50")
    moved = handle(s1, {"type": "move_table", "client_id": "mv", "table": t2.pk})
    assert moved["ok"], moved
    assert kept(s1) == D("86.50")  # a move leaves and arrives: the credits go with it
    s1.refresh_from_db()
    paid = handle(s1, {"type": "cash_out", "client_id": "out"})
    assert paid["receipt"]["amount"] == "86.50", paid
    for station in (s1, s2):
        assert kept(station) == summed(station) == ledger.balance(station)
    assert (kept(s1), kept(s2)) == (D("0.00"), D("39.90"))
    assert ledger.check() == []


def test_a_balance_is_one_row_whatever_the_history(tables):
    stations = [Station.objects.create(table=tables[0], name=f"s{n}") for n in range(3)]
    for n, station in enumerate(stations):
        for k in range(5):
            cash_in(station, f"{n + 1}.00", key=f"in{k}")
    with CaptureQueriesContext(connection) as queries:
        credits = ledger.balances(station.pk for station in stations)
    assert credits == {s.pk: D(f"{5 * (n + 1)}.00") for n, s in enumerate(stations)}
    assert len(queries) == 1
    assert LedgerEntry._meta.db_table not in queries[0]["sql"]  # no sum over the entries


def test_when_each_stations_money_last_moved_is_one_query(tables):
    stations = [Station.objects.create(table=tables[0], name=f"s{n}") for n in range(3)]
    for n, station in enumerate(stations[:2]):
        for k in range(n + 2):
            cash_in(station, "1.00", key=f"in{k}")
    newest = {s.pk: LedgerEntry.objects.filter(station=s).order_by("-pk").first() for s in stations}
    # The newest entry is the one that counts, even where an older one has a later time.
    LedgerEntry.objects.filter(station=stations[1]).exclude(pk=newest[stations[1].pk].pk).update(
        created_at=newest[stations[1].pk].created_at + timedelta(hours=1)
    )
    with CaptureQueriesContext(connection) as queries:
        moved = ledger.last_entries_at([*(s.pk for s in reversed(stations)), stations[0].pk])
    assert len(queries) == 1
    assert list(moved) == [s.pk for s in reversed(stations)]  # as asked, each once
    assert moved == {
        stations[0].pk: newest[stations[0].pk].created_at,
        stations[1].pk: newest[stations[1].pk].created_at,
        stations[2].pk: None,  # no entry yet
    }
    assert ledger.last_entries_at([]) == {}


def test_credits_read_under_the_lock_are_read_once_until_the_transaction_adds_to_them(tables):
    s1 = Station.objects.create(table=tables[0], name="s1")
    s2 = Station.objects.create(table=tables[0], name="s2")
    cash_in(s1, "90.00", key="in")
    cash_in(s2, "40.00", key="in")
    with transaction.atomic():
        assert ledger.lock_credits([s1, s2]) == {s1.pk: D("90.00"), s2.pk: D("40.00")}
        with CaptureQueriesContext(connection) as again:
            assert ledger.lock_credits([s2]) == {s2.pk: D("40.00")}
        assert len(again) == 0  # locked and read already
        cash_in(s1, "5.00", key="more")  # this transaction adds: what was read is forgotten
        assert ledger.lock_credits([s1]) == {s1.pk: D("95.00")}
        try:
            with transaction.atomic():
                cash_in(s2, "1.00", key="undone")
                assert ledger.lock_credits([s2]) == {s2.pk: D("41.00")}
                raise RuntimeError("undo the savepoint")
        except RuntimeError:
            pass
        assert ledger.lock_credits([s1, s2]) == {s1.pk: D("95.00"), s2.pk: D("40.00")}
    assert ledger.check() == []


def test_credits_changed_behind_the_ledgers_back_are_named(tables):
    s1 = Station.objects.create(table=tables[0], name="s1")
    s2 = Station.objects.create(table=tables[0], name="s2")
    cash_in(s1, "20.00", key="in")
    StationCredits.objects.filter(pk=s1.pk).update(cents=F("cents") + 1)
    StationCredits.objects.create(station=s2, cents=500)  # a row, and no entry at all
    assert ledger.check() == [
        f"station {s1.pk} (s1)'s credits 20.01 are not the sum of its entries, 20.00",
        f"station {s2.pk} (s2)'s credits 5.00 are not the sum of its entries, 0.00",
    ]


@pytest.mark.django_db(transaction=True)
def test_two_connections_moving_one_stations_money_at_once_both_count(tables):
    s1 = Station.objects.create(table=tables[0], name="s1")
    start = threading.Barrier(4)
    failures: list[Exception] = []

    def cash(key: str) -> None:
        try:
            start.wait(5)
            cash_in(s1, "10.05", key=key)
        except Exception as exc:  # reported by the test
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=cash, args=(f"k{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    assert kept(s1) == summed(s1) == D("40.20")
    assert ledger.check() == []


def test_the_migration_keeps_the_credits_of_the_ledger_written_before_it(tables):
    s1 = Station.objects.create(table=tables[0], name="s1")
    s2 = Station.objects.create(table=tables[0], name="s2")
    Station.objects.create(table=tables[0], name="s3")  # never had money: no row
    cash_in(s1, "100.00", key="in")
    cash_in(s2, "0.10", key="in")
    play(tables[0], [(s1, 1, "main", "12.35")], "TS 9C TD 9D", [("s1", "stand")])
    paid = handle(s2, {"type": "cash_out", "client_id": "out"})
    assert paid["receipt"]["amount"] == "0.10", paid
    before = dict(StationCredits.objects.values_list("station_id", "cents"))
    assert before == {s1.pk: 11235, s2.pk: 0}
    StationCredits.objects.all().delete()  # as before payouts/0010
    migration = importlib.import_module("payouts.migrations.0010_station_credits")
    migration.credits_from_entries(django_apps, None)
    assert dict(StationCredits.objects.values_list("station_id", "cents")) == before
    assert ledger.check() == []
