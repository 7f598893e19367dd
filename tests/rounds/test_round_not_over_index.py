"""A table's round that is not over is found by the partial index ``round_not_over_by_table``
(rounds/models.py), not by walking back through every round the table played: every batch
of station messages and every station state asks for it. Checked on PostgreSQL, the
production database (SQLite's planner does not match a partial index to a query whose
values are bound parameters; the embedded default keeps the walk)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from rounds import writer
from rounds.models import ENDED, Round
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db


def test_the_index_holds_the_phases_that_end_a_round():
    index = next(i for i in Round._meta.indexes if i.name == "round_not_over_by_table")
    assert index.condition is not None
    ((lookup, phases),) = index.condition.children  # ~Q(phase__in=[...])
    assert index.condition.negated and lookup == "phase__in"
    assert sorted(phases) == sorted(ENDED)


def test_a_tables_round_not_over_is_read_from_its_index(postgres_url):
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    config = TableConfig.objects.create(table=table, version=1, rules={})
    played = [Round(table=table, number=n, config=config, phase="settled") for n in range(1, 3001)]
    Round.objects.bulk_create(played)
    open_round = Round.objects.create(table=table, number=3001, config=config)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Round._meta.db_table}")
    with CaptureQueriesContext(connection) as queries:
        assert writer.current_round(table.pk) == open_round
    (query,) = queries.captured_queries
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + query["sql"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "round_not_over_by_table" in plan, plan
