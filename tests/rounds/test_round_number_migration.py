"""The migration that numbers rounds per table (rounds/migrations/0007_round_number.py)
numbers the rounds already played, at each table in the order they were opened."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def newest() -> list[tuple[str, str]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_existing_rounds_are_numbered_per_table_in_their_order():
    # The rounds just before they were numbered, and what depends on their numbers unapplied
    # with them (the migrations of later features); every other app as it is.
    executor = MigrationExecutor(connection)
    executor.migrate([("rounds", "0006_event_kept")])
    executor.loader.build_graph()
    old = executor.loader.project_state(list(executor.loader.applied_migrations)).apps
    Jurisdiction = old.get_model("tablehub", "Jurisdiction")
    Table, TableConfig = (
        old.get_model("tablehub", "Table"),
        old.get_model("tablehub", "TableConfig"),
    )
    Round = old.get_model("rounds", "Round")
    jurisdiction = Jurisdiction.objects.create(
        code="j", name="J", approved_special_bets=[], blackjack_pays=["3:2"]
    )
    tables = [Table.objects.create(name=f"t{n}", jurisdiction=jurisdiction) for n in (1, 2)]
    configs = [TableConfig.objects.create(table=t, version=1, rules={}, limits={}) for t in tables]
    order = [0, 1, 0, 0, 1]  # the tables the rounds were opened at, in this order
    opened = [Round.objects.create(table=tables[i], config=configs[i]).pk for i in order]

    after = newest()
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = executor.loader.project_state(after).apps.get_model("rounds", "Round")
    numbers = dict(new.objects.values_list("pk", "number"))
    assert [numbers[pk] for pk in opened] == [1, 1, 2, 3, 2]
