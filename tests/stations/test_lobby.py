"""The stadium lobby (stations/lobby.py): a station lists its stadium's tables and moves among
them between rounds with its credits, to the cent, the ledger recording the move once; every
refusal changes nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from payouts import ledger
from payouts.models import LedgerEntry, StationMeter
from rounds import writer
from rounds.engine import EngineError, RuleSet
from stations import lobby, seats
from stations.commands import handle, place_bets
from stations.models import Station, TableSeat
from stations.services import cash_in
from tablehub.models import Jurisdiction, Play, Stadium, Table, TableConfig
from tests.helpers import play

pytestmark = pytest.mark.django_db


def configured(table: Table, **rules) -> Table:
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(**rules).to_dict(),
        limits={"main": ["1.00", "100.00"], "special": ["1.00", "25.00"]},
        special_bets={"21+3": {"straight_flush": 40, "flush": 5}},
    )
    return table


@pytest.fixture
def stadium():
    return Stadium.objects.create(name="Main floor")


@pytest.fixture
def tables(stadium):
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    a = configured(
        Table.objects.create(name="A", jurisdiction=jurisdiction, stadium=stadium, is_open=True)
    )
    b = configured(
        Table.objects.create(
            name="B",
            jurisdiction=jurisdiction,
            stadium=stadium,
            is_open=True,
            mode=Table.Mode.VIDEO,
        ),
        decks=6,
    )
    return a, b


@pytest.fixture
def s1(tables, stadium):
    station = Station.objects.create(table=tables[0], name="s1", stadium=stadium)
    cash_in(station, "123.45", key="start")
    return station


def entries() -> list[tuple[str, Decimal, int | None]]:
    return list(LedgerEntry.objects.order_by("pk").values_list("key", "amount", "table_id"))


def test_the_lobby_lists_each_table_of_the_stadium_with_its_set_up_and_players(tables, s1):
    a, b = tables
    dealer = User.objects.create_user("ana", first_name="Ana")
    Table.objects.filter(pk=a.pk).update(dealer=dealer)
    Station.objects.create(table=b, name="v1")  # no credits: not a player
    cash_in(Station.objects.create(table=b, name="v2"), "5", key="k")
    lines = lobby.stadium_tables(s1)
    assert [line["table"] for line in lines] == ["A", "B"]
    first, second = lines
    assert first == {
        "table_id": a.pk,
        "table": "A",
        "here": True,
        "mode": "dealer",
        "play": "common_draw",
        "open": True,
        "currency": "USD",
        "boxes": 3,
        "rules": {name: RuleSet().to_dict()[name] for name in lobby.RULES_SHOWN},
        "limits": {"main": ["1.00", "100.00"], "special": ["1.00", "25.00"]},
        "special_bets": ["21+3"],
        "players": 1,
        "dealer": "Ana",
    }
    assert second["here"] is False and second["mode"] == "video" and second["dealer"] is None
    assert second["rules"]["decks"] == 6 and second["players"] == 1


def test_a_station_of_no_stadium_lists_its_own_table(tables):
    lone = Station.objects.create(table=tables[0], name="lone")
    assert [line["table"] for line in lobby.stadium_tables(lone)] == ["A"]


def test_a_move_keeps_the_credits_to_the_cent_and_the_ledger_records_it_once(tables, s1):
    a, b = tables
    before = entries()
    moved = lobby.move_station(s1, b.pk, "m-1")
    assert moved == b
    s1.refresh_from_db()
    assert s1.table_id == b.pk
    assert ledger.balance(s1) == Decimal("123.45")
    written = entries()[len(before) :]
    key = f"station:{s1.pk}:move:m-1"
    assert written == [
        (f"{key}:leave", Decimal("-123.45"), a.pk),
        (f"{key}:leave|house", Decimal("123.45"), a.pk),
        (f"{key}:arrive", Decimal("123.45"), b.pk),
        (f"{key}:arrive|house", Decimal("-123.45"), b.pk),
    ]
    # Written once: the same client key again (a retried move) writes nothing more.
    assert ledger.move(s1, a.pk, "m-1") == Decimal("123.45")
    assert len(entries()) == len(before) + 4
    assert ledger.balance(s1) == Decimal("123.45")
    assert ledger.check() == []


def test_a_resent_move_message_is_answered_again_and_moves_once(tables, s1):
    a, b = tables
    first = handle(s1, {"type": "move_table", "client_id": "c-1", "table": b.pk})
    assert first["ok"] and first["moved"]["table_id"] == b.pk
    assert first["moved"]["page"] == f"/tables/{b.pk}/stations/s1/"
    assert first["state"]["info"]["table_id"] == b.pk
    assert first["state"]["credits"] == "123.45"
    count = len(entries())
    again = handle(s1, {"type": "move_table", "client_id": "c-1", "table": b.pk})
    assert again["resent"] is True and again["moved"] == first["moved"]
    assert len(entries()) == count


def test_a_message_for_the_old_table_after_the_move_is_refused(tables, s1):
    """A socket of the station still at the old table (its copy of the station says so):
    its message is refused with ``unauthorized`` and changes nothing."""
    a, b = tables
    stale = Station.objects.get(pk=s1.pk)
    lobby.move_station(s1, b.pk, "m-1")
    writer.open_round(a)
    reply = handle(stale, {"type": "place", "client_id": "c-1", "box": 1, "amount": "5"})
    assert reply["ok"] is False and reply["error"]["code"] == "unauthorized"
    assert not a.rounds.get().bets.exists()


def test_play_at_both_tables_keeps_the_books_and_the_meters_balanced(tables, s1):
    a, b = tables
    round = play(a, [(s1, 1, "main", "10")], "TS 9H 9D 8C", [("s1", "stand")])
    assert round.phase == "settled"
    after_a = ledger.balance(s1)
    assert after_a != Decimal("123.45")
    lobby.move_station(s1, b.pk, "m-1")
    assert ledger.balance(s1) == after_a
    round = play(b, [(s1, 1, "main", "20")], "TS 9H 9D 8C", [("s1", "stand")])
    assert round.phase == "settled"
    assert after_a == Decimal("133.45")  # 19 against 17: won 10.00
    assert ledger.balance(s1) == Decimal("153.45")  # and 20.00 at the other table
    assert ledger.check() == []
    assert StationMeter.objects.get(pk=s1.pk).table_id == b.pk


def refused(station: Station, table_id: int, code: str) -> None:
    before = (entries(), Station.objects.get(pk=station.pk).table_id, ledger.balance(station))
    with pytest.raises(EngineError) as refusal:
        lobby.move_station(station, table_id, "m-x")
    assert refusal.value.code == code
    after = (entries(), Station.objects.get(pk=station.pk).table_id, ledger.balance(station))
    assert after == before


def test_a_move_with_bets_on_the_open_round_is_refused(tables, s1):
    a, b = tables
    writer.open_round(a)
    place_bets(s1, [(1, "main", Decimal("5"))])
    refused(s1, b.pk, "bets_unsettled")


def test_a_move_with_a_hand_in_play_is_refused(tables, s1):
    a, b = tables
    round = writer.open_round(a)
    place_bets(s1, [(1, "main", Decimal("5"))])
    writer.close_bets(round.pk)
    refused(s1, b.pk, "bets_unsettled")


def test_a_move_with_an_open_round_but_no_bet_of_its_own_goes(tables, s1):
    a, b = tables
    writer.open_round(a)
    lobby.move_station(s1, b.pk, "m-1")
    assert ledger.balance(s1) == Decimal("123.45")


def test_a_move_to_another_stadium_a_closed_or_the_same_table_is_refused(tables, s1):
    a, b = tables
    other = Table.objects.create(
        name="C",
        jurisdiction=a.jurisdiction,
        stadium=Stadium.objects.create(name="Other floor"),
        is_open=True,
    )
    lone = Table.objects.create(name="D", jurisdiction=a.jurisdiction, is_open=True)
    refused(s1, other.pk, "not_in_stadium")
    refused(s1, lone.pk, "not_in_stadium")
    refused(s1, 999_999, "not_in_stadium")
    refused(s1, a.pk, "same_table")
    Table.objects.filter(pk=b.pk).update(is_open=False)
    refused(s1, b.pk, "table_closed")


def test_a_station_of_no_stadium_cannot_move(tables):
    lone = Station.objects.create(table=tables[0], name="lone")
    refused(lone, tables[1].pk, "not_in_stadium")


def test_a_move_onto_a_station_of_the_same_name_another_currency_or_jurisdiction_is_refused(
    tables, s1
):
    a, b = tables
    Station.objects.create(table=b, name="s1")
    refused(s1, b.pk, "name_taken")
    euro = Table.objects.create(
        name="E", jurisdiction=a.jurisdiction, stadium=a.stadium, is_open=True, currency="EUR"
    )
    refused(s1, euro.pk, "other_currency")
    nevada = Jurisdiction.objects.create(code="nv", name="Nevada")
    other = Table.objects.create(name="N", jurisdiction=nevada, stadium=a.stadium, is_open=True)
    refused(s1, other.pk, "other_jurisdiction")


def test_a_seated_station_gets_up_when_it_moves_and_the_lobby_shows_seat_mode(tables, s1):
    a, b = tables
    TableConfig.objects.filter(table=a).update(play=Play.SEAT)
    seats.take_seat(s1, 2)
    assert lobby.stadium_tables(s1)[0]["play"] == "seat"
    lobby.move_station(s1, b.pk, "m1")
    assert not TableSeat.objects.filter(table=a).exists()
    s1.refresh_from_db()
    assert s1.table == b and ledger.balance(s1) == Decimal("123.45")
