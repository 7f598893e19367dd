"""The books: payouts.ledger.check and manage.py check_ledger, sums in Decimal cents, and a
cash-in made idempotent by the key's constraint (not by a read before the write)."""

import threading
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

D = Decimal


def a_table() -> Table:
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    return table


def played_round(table: Table) -> Station:
    s1 = Station.objects.create(table=table, name="s1")
    cash_in(s1, "100", key="start")
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("10"))])
    writer.close_bets(round.pk)
    for card in "TS 9C TD 7D".split():  # box 1: T T, dealer 9 up, 7 hole
        writer.record(round.pk, CardDrawn(parse_card(card)))
    return s1


@pytest.mark.django_db
def test_a_played_round_keeps_the_books(capsys):
    played_round(a_table())
    assert ledger.check() == []
    call_command("check_ledger")
    assert "the ledger balances" in capsys.readouterr().out


@pytest.mark.django_db
def test_check_ledger_names_each_broken_invariant(capsys):
    s1 = played_round(a_table())
    round = s1.table.rounds.get()
    LedgerEntry.objects.create(
        station=s1, round=round, kind=LedgerEntry.Kind.RETURN, amount=D("5.00"), key="forged"
    )
    broken = ledger.check()
    assert broken == [
        "the whole ledger sums to 5.00, not 0.00",
        "entry forged has no house mirror",
        f"round {round.pk}'s entries sum to 5.00, not 0.00",
        # written past the ledger, so past the station's kept credits and the meters too
        f"station {s1.pk} (s1)'s credits 90.00 are not the sum of its entries, 95.00",
        f"station {s1.pk} (s1)'s meter total_won is 0.00, the ledger says 5.00",
        f"table {s1.table_id}'s meter total_won is 0.00, the ledger says 5.00",
    ]
    with pytest.raises(CommandError, match=r"the ledger is broken: 6 invariant\(s\)") as exc:
        call_command("check_ledger")
    assert exc.value.returncode == 1
    assert capsys.readouterr().err.splitlines() == broken


@pytest.mark.django_db
def test_a_mirror_with_another_amount_is_named():
    table = a_table()
    s1 = Station.objects.create(table=table, name="s1")
    LedgerEntry.objects.create(station=s1, kind="cash_in", amount=D("5.00"), key="k")
    LedgerEntry.objects.create(station=None, kind="cash_in", amount=D("-4.00"), key="k|house")
    assert ledger.check() == [
        "the whole ledger sums to 1.00, not 0.00",
        "entry k and its house mirror do not match",
        f"station {s1.pk} (s1)'s credits 0.00 are not the sum of its entries, 5.00",
        f"station {s1.pk} (s1)'s meter cash_in is 0.00, the ledger says 5.00",
        f"table {table.pk}'s meter cash_in is 0.00, the ledger says 5.00",
    ]


def test_sums_are_decimal_cents_and_never_negative_zero():
    assert str(ledger.money(D("-0.00"))) == "0.00"
    assert str(ledger.money(-0.0)) == "0.00"
    assert ledger.money(12.5) == D("12.50") and isinstance(ledger.money(12.5), Decimal)
    assert str(ledger.money(None)) == "0.00"


@pytest.mark.django_db
def test_a_balance_back_to_zero_is_0_00():
    s1 = Station.objects.create(table=a_table(), name="s1")
    ledger.cash_in(s1, D("0.10"), "in")
    assert ledger.cash_out(s1, "out") == D("0.10")
    assert str(ledger.balance(s1)) == "0.00"


@pytest.mark.django_db(transaction=True)
def test_two_connections_cashing_in_one_key_at_once_post_it_once():
    s1 = Station.objects.create(table=a_table(), name="s1")
    start = threading.Barrier(2)
    results: list[object] = []

    def cash() -> None:
        try:
            start.wait(5)
            results.append(cash_in(s1, "25", key="same-client-id"))
        except Exception as exc:  # reported by the test
            results.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=cash) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == [D("25.00"), D("25.00")], results
    assert LedgerEntry.objects.filter(station=s1).count() == 1
    assert ledger.check() == []


@pytest.mark.parametrize(
    "text",
    [
        "round:7:s1:bet:1:main",
        "round:7:s1:b1h2:double",
        "round:7:st-9:special:2:in_for_6:return",
        "round:7:s1:bet:1:main:c12",
        "round:7:s1:bet:1:main:corrected",
        "round:7:s1:b1h1:return:c12:corrected",
        "round:7:s1:bet:1:main:void",
        "round:7:s1:b1h1:return:c12:corrected:void",
    ],
)
def test_an_entry_key_reads_back_as_it_was_written(text):
    assert ledger.EntryKey.parse(text).text() == text


def test_an_entry_key_names_its_item_and_what_happened_to_it():
    key = ledger.EntryKey.parse("round:7:s1:b1h1:return:c12:corrected:void")
    assert key == ledger.EntryKey(
        ledger.ItemKey(7, "s1", "b1h1:return"), revision=12, reversal=True, refund=True
    )
    assert ledger.CashKey(3, "cash_in", "client:a:b").text() == "station:3:cash_in:client:a:b"


@pytest.mark.django_db
def test_the_books_hold_the_stake_and_a_zero_movement_is_not_written():
    s1 = played_round(a_table())
    round = s1.table.rounds.get()
    books = ledger.round_books(round)
    assert {item.item: held[1] for item, held in books.now.items()} == {"bet:1:main": D("-10")}
    item = ledger.ItemKey(round.pk, "s1", "nothing")
    assert ledger.post_round_items(round, {"s1": s1}, {item: D("0.00")}, books, 99) == 0
    assert not LedgerEntry.objects.filter(key__contains="nothing").exists()


@pytest.mark.django_db
def test_the_database_refuses_an_entry_of_nothing():
    s1 = Station.objects.create(table=a_table(), name="s1")
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEntry.objects.create(station=s1, kind="cash_in", amount=D("0.00"), key="zero")


@pytest.mark.django_db
def test_a_balance_below_zero_is_named():
    s1 = Station.objects.create(table=a_table(), name="s1")
    # Written past the ledger's own checks (ledger.post does not look at the balance).
    ledger.post(s1, None, "cash_out", D("-5.00"), ledger.CashKey(s1.pk, "cash_out", "forged"))
    assert ledger.check() == [f"station {s1.pk} (s1)'s balance -5.00 is below zero"]
