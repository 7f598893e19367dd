"""``__among`` (tablehub/lookups.py): the rows ``__in`` finds, for keys and foreign keys, with
one placeholder per id and no work per value; no ids, no rows; anything but ids refused."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from stations.models import Station, StationBreak
from tablehub.models import Jurisdiction, Table


@pytest.fixture
def stations(db) -> list[Station]:
    table = Table.objects.create(name="t1", jurisdiction=Jurisdiction.objects.create(code="wa"))
    return [Station.objects.create(table=table, name=f"s{n}") for n in range(6)]


def test_among_finds_the_rows_in_finds_for_keys_and_foreign_keys(stations) -> None:
    ids = [stations[4].pk, stations[1].pk, stations[4].pk, 10**9]  # a repeat, an unknown id
    by_key = Station.objects.filter(pk__among=ids).order_by("pk")
    assert list(by_key) == list(Station.objects.filter(pk__in=ids).order_by("pk"))
    assert [s.name for s in by_key] == ["s1", "s4"]
    for station in stations[:3]:
        StationBreak.objects.create(station=station, until=timezone.now())
    wanted = {stations[2].pk, stations[5].pk}
    found = StationBreak.objects.filter(station_id__among=wanted).values_list("station__name")
    assert list(found) == [("s2",)]
    assert list(
        StationBreak.objects.filter(station__among=wanted).values_list("station__name")
    ) == [("s2",)]


def test_among_writes_the_ids_in_one_list_and_no_ids_finds_nothing(stations) -> None:
    """One placeholder per id, or on PostgreSQL one array parameter for all of them."""
    ids = [s.pk for s in stations]
    with CaptureQueriesContext(connection) as captured:
        assert Station.objects.filter(pk__among=ids).count() == 6
        assert list(Station.objects.filter(pk__among=[])) == []  # no query at all
    (query,) = captured.captured_queries
    if connection.vendor == "postgresql":
        assert query["sql"].count(" = ANY(") == 1 and " IN (" not in query["sql"]
        assert "{" + ",".join(str(pk) for pk in ids) + "}" in query["sql"]
    else:
        assert query["sql"].count(" IN (") == 1
        assert all(str(pk) in query["sql"] for pk in ids)


@pytest.mark.parametrize("value", [["1"], [1.0], [None], "12", 5])
def test_among_takes_ids_only(stations, value) -> None:
    with pytest.raises(TypeError):
        list(Station.objects.filter(pk__among=value))
