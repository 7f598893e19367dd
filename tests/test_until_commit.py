"""What a transaction holds until it commits (tablehub/until_commit.py), on the real
database: its on-commit callbacks found by class, in order; those of a rolled-back savepoint
gone, also after they were looked up; nothing once the transaction is over; the last one per
key kept as more are added; and a lookup per message does not rescan the whole list."""

import pytest
from django.db import connection, transaction

from tablehub import until_commit


class Held:
    def __init__(self, key: str, n: int) -> None:
        self.key, self.n = key, n

    def __call__(self) -> None:
        pass


class Other(Held):
    pass


def key_of(held: Held) -> str:
    return held.key


def names(callbacks) -> list[tuple[str, int]]:
    return [(c.key, c.n) for c in callbacks]


@pytest.mark.django_db(transaction=True)
def test_callbacks_by_class_in_order_and_a_rolled_back_savepoints_are_gone() -> None:
    with transaction.atomic():
        transaction.on_commit(Held("a", 1))
        transaction.on_commit(Other("a", 2))  # a subclass is a class of its own
        transaction.on_commit(lambda: None)
        assert names(until_commit.waiting(Held)) == [("a", 1)]
        assert until_commit.last_by(Held, key_of)["a"].n == 1

        transaction.on_commit(Held("b", 3))
        transaction.on_commit(Held("a", 4))
        assert names(until_commit.waiting(Held)) == [("a", 1), ("b", 3), ("a", 4)]
        assert {k: c.n for k, c in until_commit.last_by(Held, key_of).items()} == {"a": 4, "b": 3}

        with pytest.raises(RuntimeError), transaction.atomic():  # a refused message
            transaction.on_commit(Held("a", 5))
            transaction.on_commit(Held("c", 6))
            assert until_commit.last_by(Held, key_of)["a"].n == 5
            raise RuntimeError("refused")
        assert names(until_commit.waiting(Held)) == [("a", 1), ("b", 3), ("a", 4)]
        assert {k: c.n for k, c in until_commit.last_by(Held, key_of).items()} == {"a": 4, "b": 3}
        assert names(until_commit.waiting(Other)) == [("a", 2)]

    assert until_commit.waiting(Held) == ()  # committed: nothing held
    assert until_commit.last_by(Held, key_of) == {}


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transaction_holds_nothing_afterwards() -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        transaction.on_commit(Held("a", 1))
        assert len(until_commit.waiting(Held)) == 1
        raise RuntimeError("failed")
    with transaction.atomic():
        assert until_commit.waiting(Held) == ()
        transaction.on_commit(Held("b", 2))
        assert names(until_commit.waiting(Held)) == [("b", 2)]


@pytest.mark.django_db(transaction=True)
def test_a_lookup_reads_only_the_callbacks_added_since_the_last() -> None:
    """A batch of n messages, each registering a callback and looking them up, reads each
    callback once (not n times): counted on the entries read from Django's list."""

    class Counting(list):
        reads = 0

        def __getitem__(self, index):
            items = super().__getitem__(index)
            Counting.reads += len(items) if isinstance(index, slice) else 1
            return items

    with transaction.atomic():
        connection.run_on_commit = Counting(connection.run_on_commit)
        for n in range(500):
            transaction.on_commit(Held(f"s{n}", n))
            assert until_commit.last_by(Held, key_of)[f"s{n}"].n == n
        assert Counting.reads == 500
