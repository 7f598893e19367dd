"""The rounds a Dispute button may name (settled within the window, or halted by a dispute)
are found by the partial indexes ``round_settled_by_table`` and ``round_halted_by_table``
(rounds/models.py), not by a walk through every round the table played: a batch's replies
look there once for all their stations (rounds/disputes.py ``stations_disputes``). Checked
on PostgreSQL, the production database (SQLite's planner does not match a partial index to
a query whose values are bound parameters)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from rounds import disputes, writer
from rounds.models import Bet, Round
from stations.models import Station
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db


def test_the_halted_index_holds_the_writers_halted_step_keys():
    index = next(i for i in Round._meta.indexes if i.name == "round_halted_by_table")
    assert index.condition is not None
    assert index.condition.children == [("step_key__startswith", writer.HALTED)]


def test_the_rounds_a_dispute_may_name_are_read_from_their_indexes(postgres_url):
    jurisdiction = Jurisdiction.objects.create(
        code="wa", name="Washington", disputes_allowed=True, dispute_window_seconds=300
    )
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    config = TableConfig.objects.create(table=table, version=1, rules={})
    stations = [Station.objects.create(table=table, name=f"s{n}") for n in range(3)]
    long_ago = timezone.now() - timedelta(days=1)
    played = Round.objects.bulk_create(
        Round(table=table, number=n, config=config, phase="settled", settled_at=long_ago)
        for n in range(1, 3001)
    )
    recent = Round.objects.create(
        table=table, number=3001, config=config, phase="settled", settled_at=timezone.now()
    )
    halted = played[10]  # a dispute of a settled round, made in its window, still open
    Round.objects.filter(pk=halted.pk).update(step_key=f"{writer.HALTED}7")
    Bet.objects.bulk_create(
        Bet(round=round, station=station, box=1, code="main", stake=Decimal("1"))
        for round, station in [(p, stations[0]) for p in played]
        + [(recent, stations[1]), (halted, stations[2])]
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Round._meta.db_table}")
    joined = list(Station.objects.filter(table=table).select_related("table__jurisdiction"))
    with CaptureQueriesContext(connection) as queries:
        buttons = disputes.stations_disputes(joined, None, set(), 0)
    assert [buttons[s.pk] and buttons[s.pk]["round"] for s in stations] == [
        halted.pk,  # its last round in the window is long gone; the halted one is not
        recent.pk,
        halted.pk,
    ]
    assert buttons[stations[0].pk]["halted"] is True
    lookup = next(q["sql"] for q in queries.captured_queries if "GROUP BY" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + lookup)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "round_settled_by_table" in plan and "round_halted_by_table" in plan, plan
