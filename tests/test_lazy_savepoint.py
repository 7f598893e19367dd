"""A nested atomic block whose savepoint is taken only before its first write
(tablehub/lazy_savepoint.py), on the real database: a block that only reads issues no
statement of its own, and a refusal in it drops its on-commit callbacks and leaves the
transaction good; a block that wrote and failed has its rows rolled back and the
transaction goes on to commit what came before; a failed read with no savepoint leaves the
transaction marked for rollback; outside a transaction it is Django's atomic block."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from tablehub import lazy_savepoint, until_commit
from tablehub.models import Stadium


class Held:
    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self) -> None:
        pass


class Refused(Exception):
    pass


def held() -> list[int]:
    return [callback.n for callback in until_commit.waiting(Held)]


def savepoint_statements(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if "SAVEPOINT" in q["sql"].upper()]


@pytest.mark.django_db(transaction=True)
def test_a_block_that_only_reads_takes_no_savepoint_and_a_refusal_drops_its_callbacks() -> None:
    with transaction.atomic():
        transaction.on_commit(Held(1))
        with CaptureQueriesContext(connection) as captured:
            with lazy_savepoint.atomic():
                assert Stadium.objects.count() == 0
                transaction.on_commit(Held(2))
            assert held() == [1, 2]  # kept: the block ended well
            with pytest.raises(Refused), lazy_savepoint.atomic():
                list(Stadium.objects.select_for_update())
                transaction.on_commit(Held(3))
                assert held() == [1, 2, 3]
                raise Refused
        assert savepoint_statements(captured) == []
        assert held() == [1, 2]  # the refused block's callback is gone, the others stay
        assert not transaction.get_rollback()
        Stadium.objects.create(name="after the refusal")  # the transaction goes on
    assert list(Stadium.objects.values_list("name", flat=True)) == ["after the refusal"]


@pytest.mark.django_db(transaction=True)
def test_a_block_that_wrote_and_failed_is_rolled_back_alone() -> None:
    with transaction.atomic():
        Stadium.objects.create(name="before")
        transaction.on_commit(Held(1))
        with CaptureQueriesContext(connection) as captured:
            with pytest.raises(Refused), lazy_savepoint.atomic():
                transaction.on_commit(Held(2))  # before its first write: dropped too
                Stadium.objects.create(name="refused")
                transaction.on_commit(Held(3))
                raise Refused
        statements = savepoint_statements(captured)
        assert [s.split()[0].upper() for s in statements] == ["SAVEPOINT", "ROLLBACK", "RELEASE"]
        assert held() == [1]
        assert not transaction.get_rollback()
        with lazy_savepoint.atomic():
            Stadium.objects.create(name="kept")
        assert held() == [1]
    assert sorted(Stadium.objects.values_list("name", flat=True)) == ["before", "kept"]


@pytest.mark.django_db(transaction=True)
def test_a_failed_statement_with_no_savepoint_leaves_the_transaction_to_roll_back() -> None:
    with pytest.raises(DatabaseError), transaction.atomic():
        Stadium.objects.create(name="undone with the transaction")
        with pytest.raises(DatabaseError), lazy_savepoint.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT * FROM no_such_table")
        assert transaction.get_rollback()  # nothing to roll back to: the whole transaction
        Stadium.objects.count()  # refused: Django's "an error occurred in the transaction"
    assert not Stadium.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_failed_write_inside_is_rolled_back_to_its_savepoint() -> None:
    with transaction.atomic():
        Stadium.objects.create(name="taken")
        with pytest.raises(DatabaseError), lazy_savepoint.atomic():
            Stadium.objects.create(name="fine")
            Stadium.objects.create(name="taken")  # the unique name: an IntegrityError
        assert not transaction.get_rollback()
        Stadium.objects.create(name="after")
    assert sorted(Stadium.objects.values_list("name", flat=True)) == ["after", "taken"]


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_it_is_a_transaction() -> None:
    with pytest.raises(Refused), lazy_savepoint.atomic():
        assert connection.in_atomic_block
        Stadium.objects.create(name="rolled back")
        raise Refused
    with lazy_savepoint.atomic():
        Stadium.objects.create(name="committed")
    assert not connection.in_atomic_block
    assert list(Stadium.objects.values_list("name", flat=True)) == ["committed"]
