"""The soft meters (payouts/meters.py): to the cent after real rounds played through the round
writer and the station commands (a win, a loss, a push, a double, a void before and after
the settlement, cash-in and cash-out, a tip), equal to the ledger's sums, and
``check_ledger`` naming a meter changed behind the ledger's back."""

import importlib
import threading
from decimal import Decimal

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.models import F

from payouts import ledger, meters
from payouts.models import StationMeter, TableMeter
from rounds import corrections, voids, writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from stations.commands import handle, place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import play

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(
        code="wa", name="Washington", disputes_allowed=True, dispute_window_seconds=60
    )
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction, boxes=3)
    TableConfig.objects.create(
        table=table, version=1, rules=RuleSet().to_dict(), limits={"main": ["1", "100"]}
    )
    return table


@pytest.fixture
def stations(table):
    made = []
    for name in ("s1", "s2", "s3"):
        station = Station.objects.create(table=table, name=name)
        cash_in(station, "100.00", key="start")
        made.append(station)
    return made


def meter(station: Station) -> dict:
    return meters.shown(StationMeter.objects.filter(pk=station.pk).first())


def table_meter(table: Table) -> dict:
    return meters.shown(TableMeter.objects.filter(pk=table.pk).first())


def send(station: Station, client_id: str, **message) -> dict:
    return handle(station, {"client_id": client_id, **message})


def test_a_win_a_loss_and_a_push_to_the_cent(table, stations):
    s1, s2, s3 = stations
    # Box 1 T T (20) wins, box 2 T 7 (17) loses, box 3 T 8 (18) pushes: the dealer 9 9 (18).
    play(
        table,
        [(s1, 1, "main", "12.35"), (s2, 2, "main", "10.10"), (s3, 3, "main", "7.05")],
        "TS TC TH 9C TD 7D 8D 9D",
        [("s1", "stand"), ("s2", "stand"), ("s3", "stand")],
    )
    assert meter(s1) == {
        "total_wagered": D("12.35"),
        "total_won": D("24.70"),
        "games_played": 1,
        "games_won": 1,
        "cash_in": D("100.00"),
        "cash_out": D("0.00"),
        "voided_stakes": D("0.00"),
        "tips": D("0.00"),
        "house_losses": D("0.00"),
    }
    assert (meter(s2)["total_wagered"], meter(s2)["total_won"]) == (D("10.10"), D("0.00"))
    assert (meter(s2)["games_played"], meter(s2)["games_won"]) == (1, 0)
    assert (meter(s3)["total_wagered"], meter(s3)["total_won"]) == (D("7.05"), D("7.05"))
    assert (meter(s3)["games_played"], meter(s3)["games_won"]) == (1, 0)  # a push: not won
    everything = table_meter(table)
    assert everything["total_wagered"] == D("29.50")
    assert everything["total_won"] == D("31.75")
    assert (everything["games_played"], everything["games_won"]) == (3, 1)
    assert everything["cash_in"] == D("300.00")
    assert ledger.check() == []
    # What a gaming machine's meters reconcile: the credits.
    for station in stations:
        m = meter(station)
        credits = m["cash_in"] - m["cash_out"] - m["total_wagered"] + m["total_won"]
        assert credits == ledger.balance(station)


def test_a_correction_of_a_settled_round_counts_its_games_again(table, stations):
    s1, s2, s3 = stations
    round = play(
        table,
        [(s1, 1, "main", "12.35"), (s2, 2, "main", "10.10"), (s3, 3, "main", "7.05")],
        "TS TC TH 9C TD 7D 8D 9D",
        [("s1", "stand"), ("s2", "stand"), ("s3", "stand")],
    )
    # s1's second card was a 6, not a ten: 16 loses to the dealer's 18.
    corrections.correct_cards(round.pk, [{"position": 5, "card": "6D"}], by="sup")
    assert (meter(s1)["total_wagered"], meter(s1)["total_won"]) == (D("12.35"), D("0.00"))
    assert (meter(s1)["games_played"], meter(s1)["games_won"]) == (1, 0)
    assert (table_meter(table)["games_played"], table_meter(table)["games_won"]) == (3, 0)
    assert table_meter(table)["total_won"] == D("7.05")
    assert ledger.check() == []


def test_a_void_gives_the_stakes_back_and_counts_no_game(table, stations):
    s1, s2, _s3 = stations
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("20.40"))])
    place_bets(s2, [(2, "main", D("5.00"))])
    writer.close_bets(round.pk)
    for card in "TS 9C".split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    voids.void_round(round.pk, by="sup", reason="shoe fault")
    assert meter(s1)["total_wagered"] == D("20.40")
    assert meter(s1)["voided_stakes"] == D("20.40")
    assert (meter(s1)["total_won"], meter(s1)["games_played"]) == (D("0.00"), 0)
    assert table_meter(table)["voided_stakes"] == D("25.40")
    assert table_meter(table)["games_played"] == 0
    assert ledger.balance(s1) == D("100.00")
    assert ledger.check() == []


def test_a_void_of_a_settled_round_takes_its_return_and_its_game_back(table, stations):
    s1, s2, s3 = stations
    round = play(
        table,
        [(s1, 1, "main", "12.35"), (s2, 2, "main", "10.10"), (s3, 3, "main", "7.05")],
        "TS TC TH 9C TD 7D 8D 9D",
        [("s1", "stand"), ("s2", "stand"), ("s3", "stand")],
    )
    voids.void_round(round.pk, by="sup", reason="a disputed result")  # in its window
    assert meter(s1)["total_wagered"] == D("12.35")
    assert meter(s1)["total_won"] == D("0.00")  # the 24.70 paid, taken back
    assert meter(s1)["voided_stakes"] == D("12.35")
    assert (meter(s1)["games_played"], meter(s1)["games_won"]) == (0, 0)
    assert (table_meter(table)["total_won"], table_meter(table)["games_played"]) == (D("0"), 0)
    assert table_meter(table)["voided_stakes"] == D("29.50")
    for station in stations:
        assert ledger.balance(station) == D("100.00")
    assert ledger.check() == []


def test_a_double_in_a_batch_and_a_cash_out_are_counted(table, stations):
    s1 = stations[0]
    round = writer.open_round(table)
    assert send(s1, "b1", type="place", box=1, amount="10.00")["ok"]
    writer.close_bets(round.pk)
    for card in "6S 6C 5D TD".split():  # box 1: 6 5, the dealer 6 up, T in the hole
        writer.record(round.pk, CardDrawn(parse_card(card)))
    assert send(s1, "d1", type="decide", action="double")["ok"]  # written by a batch
    assert meter(s1)["total_wagered"] == D("20.00")
    writer.record(round.pk, CardDrawn(parse_card("TH")))  # box 1: 21 on the double
    writer.record(round.pk, CardDrawn(parse_card("KS")))  # the dealer: 26, bust
    assert meter(s1)["total_won"] == D("40.00")
    assert (meter(s1)["games_played"], meter(s1)["games_won"]) == (1, 1)
    reply = send(s1, "out", type="cash_out")
    assert reply["receipt"]["amount"] == "120.00"
    assert meter(s1)["cash_out"] == D("120.00")
    assert table_meter(table)["cash_out"] == D("120.00")
    assert ledger.check() == []


def test_a_meter_changed_behind_the_ledgers_back_is_named(table, stations, capsys):
    s1 = stations[0]
    play(table, [(s1, 1, "main", "12.35")], "TS 9C TD 9D", [("s1", "stand")])
    assert ledger.check() == []
    StationMeter.objects.filter(pk=s1.pk).update(total_won_cents=F("total_won_cents") + 1)
    TableMeter.objects.filter(pk=table.pk).update(games_played=5)
    broken = [
        f"station {s1.pk} (s1)'s meter total_won is 24.71, the ledger says 24.70",
        f"table {table.pk}'s meter games_played is 5, the ledger says 1",
    ]
    assert ledger.check() == broken
    with pytest.raises(CommandError, match=r"the ledger is broken: 2 invariant\(s\)") as exc:
        call_command("check_ledger")
    assert exc.value.returncode == 1
    assert capsys.readouterr().err.splitlines() == broken


def test_a_meter_row_deleted_is_named(table, stations):
    s2 = stations[1]
    StationMeter.objects.filter(pk=s2.pk).delete()
    assert ledger.check() == [
        f"station {s2.pk} (s2)'s meter cash_in is 0.00, the ledger says 100.00",
    ]


@pytest.mark.django_db(transaction=True)
def test_two_connections_moving_money_at_once_both_count(table):
    made = [Station.objects.create(table=table, name=f"s{n}") for n in range(1, 5)]
    start = threading.Barrier(len(made))
    failures: list[Exception] = []

    def cash(station: Station) -> None:
        try:
            start.wait(5)
            cash_in(station, "10.05", key="at-once")
        except Exception as exc:  # reported by the test
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=cash, args=(station,)) for station in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    assert table_meter(table)["cash_in"] == D("40.20")
    assert [meter(station)["cash_in"] for station in made] == [D("10.05")] * 4
    assert ledger.check() == []


def all_meters() -> dict[tuple[str, int], dict]:
    stations = {("station", m.pk): meters.shown(m) for m in StationMeter.objects.all()}
    return stations | {("table", m.pk): meters.shown(m) for m in TableMeter.objects.all()}


def test_the_migration_counts_the_ledger_written_before_the_meters(table, stations):
    s1, s2, s3 = stations
    bets = [(s1, 1, "main", "12.35"), (s2, 2, "main", "10.10"), (s3, 3, "main", "7.05")]
    stand = [("s1", "stand"), ("s2", "stand"), ("s3", "stand")]
    play(table, bets, "TS TC TH 9C TD 7D 8D 9D", stand)
    voided = play(table, bets, "TS TC TH 9C TD 7D 8D 9D", stand)
    voids.void_round(voided.pk, by="sup", reason="a disputed result")
    send(s1, "out", type="cash_out")
    counted = all_meters()
    assert counted[("station", s1.pk)]["total_wagered"] == D("24.70")  # two rounds' stakes
    StationMeter.objects.all().delete()  # as before payouts/0008
    TableMeter.objects.all().delete()
    migration = importlib.import_module("payouts.migrations.0008_meters_and_tips")
    migration.count_the_ledger(django_apps, None)
    assert all_meters() == counted
    assert ledger.check() == []
