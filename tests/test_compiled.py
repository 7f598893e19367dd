"""tablehub/compiled.py: a compiled query finds what its queryset finds, with new values at
every run, builds its SQL once per connection, and ``__among`` with a ``Param`` writes the
same SQL whatever the number of ids."""

from __future__ import annotations

import gc
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models import CharField, DateTimeField, Q
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from rounds.engine import RuleSet
from rounds.models import ChainHead, Round
from stations.models import Station, StationBreak, StationCommand
from tablehub.compiled import CompiledQuery, CompiledUpdate, Param
from tablehub.models import Jurisdiction, Table
from tablehub.setup import create_stations, create_table

pytestmark = pytest.mark.django_db


@pytest.fixture
def stations() -> list[Station]:
    Jurisdiction.objects.create(code="nv", name="Nevada", recall_games=7)
    table = create_table(
        "compiled", "nv", {"rules": RuleSet().to_dict(), "limits": {"main": ["1", "100"]}}
    )
    create_stations(table, [f"s{n}" for n in range(5)])
    return list(table.stations.order_by("name"))


def _counting(build):
    """``build``, counting its calls."""
    calls = []

    def counted():
        calls.append(1)
        return build()

    return counted, calls


def test_it_finds_what_its_queryset_finds_with_new_values_each_time(stations) -> None:
    build, built = _counting(
        lambda: (
            Station.objects.filter(pk__among=Param("ids"), name__startswith="s")
            .select_related("table__jurisdiction")
            .order_by("name")
        )
    )
    query = CompiledQuery(build)
    for ids in ([stations[3].pk, stations[1].pk], [stations[0].pk], [], [10**9]):
        found = query.list(ids=ids)
        assert found == list(Station.objects.filter(pk__in=ids).order_by("name"))
        for station in found:  # the related rows came with it, as select_related gives them
            with CaptureQueriesContext(connection) as reads:
                assert station.table.jurisdiction.recall_games == 7
            assert reads.captured_queries == []
    assert [s.name for s in query.list(ids=[stations[4].pk, stations[2].pk])] == ["s2", "s4"]
    assert len(built) == 1  # the queryset was built, and compiled, once


def test_the_same_sql_runs_whatever_the_number_of_ids(stations) -> None:
    query = CompiledQuery(
        lambda: Station.objects.filter(pk__among=Param("ids")).values_list("name", flat=True)
    )
    statements: list[str] = []

    def keep(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        assert sorted(query.list(ids=[s.pk for s in stations])) == [f"s{n}" for n in range(5)]
        assert query.list(ids=[stations[2].pk, stations[2].pk]) == ["s2"]  # a repeat, once
        assert query.list(ids=[]) == []
    assert len(statements) == 3 and len(set(statements)) == 1, statements


def test_text_among_finds_client_ids_with_quotes_and_others(stations) -> None:
    odd = ["it's", 'say "hi"', "back\\slash", "día", "[1, 2]"]
    for client_id in odd + ["other"]:
        StationCommand.objects.create(station=stations[0], client_id=client_id, reply={"ok": 1})
    query = CompiledQuery(
        lambda: StationCommand.objects.filter(
            station_id__among=Param("stations"), client_id__among_text=Param("client_ids")
        ).values_list("client_id", flat=True)
    )
    assert sorted(query.list(stations=[stations[0].pk], client_ids=odd)) == sorted(odd)
    assert query.list(stations=[stations[1].pk], client_ids=odd) == []
    assert query.list(stations=[stations[0].pk], client_ids=["nothing"]) == []


@pytest.mark.parametrize("ids", [["1"], [1.0], [None], "12", 5])
def test_among_with_a_param_takes_ids_only(stations, ids) -> None:
    query = CompiledQuery(lambda: Station.objects.filter(pk__among=Param("ids")))
    with pytest.raises(TypeError):
        query.list(ids=ids)


def test_text_among_takes_text_only_and_a_param_only(stations) -> None:
    query = CompiledQuery(
        lambda: StationCommand.objects.filter(client_id__among_text=Param("client_ids"))
    )
    with pytest.raises(TypeError):
        query.list(client_ids=[1])
    with pytest.raises(TypeError):
        list(StationCommand.objects.filter(client_id__among_text=["a"]))


def test_a_time_is_written_as_the_orm_writes_it(stations) -> None:
    now = timezone.now()
    # Found by its time alone (logged as ended, as no break going on is: only the time counts).
    soon = StationBreak.objects.create(
        station=stations[0], until=now + timedelta(minutes=1), end_logged=True
    )
    StationBreak.objects.create(
        station=stations[1], until=now - timedelta(minutes=1), end_logged=True
    )
    logged = StationBreak.objects.create(station=stations[2], until=now - timedelta(minutes=1))
    query = CompiledQuery(
        lambda: (
            StationBreak.objects.filter(station_id__among=Param("ids"))
            .filter(Q(until__gt=Param("now", DateTimeField())) | Q(end_logged=False))
            .order_by("pk")
        )
    )
    ids = [s.pk for s in stations]
    assert query.list(ids=ids, now=now) == [soon, logged]
    assert query.list(ids=ids, now=now + timedelta(minutes=2)) == [logged]
    assert query.list(ids=ids, now=now - timedelta(hours=1)) == list(
        StationBreak.objects.order_by("pk")
    )


@pytest.mark.django_db(transaction=True)
def test_a_locking_read_needs_a_transaction_and_every_value(stations) -> None:
    table = Table.objects.get()
    query = CompiledQuery(
        lambda: Round.objects.select_for_update().filter(table_id=Param("table_id"))
    )
    with pytest.raises(TransactionManagementError):
        query.list(table_id=table.pk)
    with transaction.atomic():
        with pytest.raises(TypeError, match="table_id"):
            query.list()
        assert query.list(table_id=table.pk) == []


def test_an_update_sets_its_fields_on_the_rows_it_finds_and_counts_them(stations) -> None:
    table = Table.objects.get()
    other = create_table(
        "other", "nv", {"rules": RuleSet().to_dict(), "limits": {"main": ["1", "100"]}}
    )
    for t in (table, other):
        for chain in ("events", "ledger"):
            ChainHead.objects.create(table=t, chain=chain, position=1, link="a" * 64)
    moved = CompiledUpdate(
        lambda: ChainHead.objects.filter(
            table_id=Param("table_id"), chain=Param("chain", ChainHead._meta.get_field("chain"))
        ),
        "position",
        "link",
    )
    assert moved.run(table_id=table.pk, chain="events", position=5, link="b" * 64) == 1
    assert moved.run(table_id=other.pk, chain="ledger", position=9, link="c" * 64) == 1
    assert moved.run(table_id=10**9, chain="events", position=2, link="d" * 64) == 0
    heads = ChainHead.objects.order_by("table_id", "chain").values_list(
        "table_id", "chain", "position", "link"
    )
    assert list(heads) == [
        (table.pk, "events", 5, "b" * 64),
        (table.pk, "ledger", 1, "a" * 64),
        (other.pk, "events", 1, "a" * 64),
        (other.pk, "ledger", 9, "c" * 64),
    ]
    with pytest.raises(TypeError, match="link"):
        moved.run(table_id=table.pk, chain="events", position=6)


def test_a_new_query_never_runs_the_sql_of_one_dropped_before_it(stations) -> None:
    """Queries made and dropped one after another (as tests do: the server's live as long
    as the process) each run their own SQL, whatever memory the last one freed."""
    for n in range(20):
        first = CompiledQuery(lambda: Station.objects.filter(pk__among=Param("ids")))
        assert first.list(ids=[stations[n % 5].pk]) == [stations[n % 5]]
        del first
        gc.collect()
        second = CompiledQuery(
            lambda: Station.objects.filter(name=Param("name", CharField())).values_list(
                "pk", flat=True
            )
        )
        assert second.list(name=stations[n % 5].name) == [stations[n % 5].pk]
