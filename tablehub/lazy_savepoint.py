"""An atomic block nested in a transaction whose savepoint is taken only before its first write.

A batch of station messages is one transaction (stations/batches.py), and each message's
change is a nested atomic block, so that a refused message leaves nothing behind. Django
makes every nested block a savepoint: two statements (SAVEPOINT, RELEASE) per message, a
round trip each on PostgreSQL, about a fifth of what a batch's message costs on its database
thread. Most messages write nothing inside their block (a bet or a decision inside a batch
waits in memory, as on-commit callbacks, until the batch's ``flush``), and most refusals
come before any write: for them a savepoint has nothing to undo.

``atomic()`` here is such a block. Its savepoint is taken just before its first statement
that is not a SELECT (an execute wrapper watches them). When it ends with an exception it
undoes what it did: its savepoint, if it took one, is rolled back, and the on-commit
callbacks registered inside it are dropped, as Django drops a rolled-back savepoint's (that
is how the writer's waiting events, bets and engine go with a refusal: tablehub/
until_commit.py). Row locks taken by a SELECT ... FOR UPDATE before the first write stay
held to the end of the transaction: harmless, the batch holds the table's round anyway.

A database error with no savepoint to roll back to (a read that failed) leaves the
transaction marked for rollback, as Django's own blocks do: the whole batch is undone and
its messages handled again one by one. Outside a transaction it is Django's atomic block.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError, connection, transaction


class _FirstWrite:
    """The execute wrapper of one block: takes the block's savepoint before its first write,
    and notes a statement that failed with no savepoint to roll back to."""

    def __init__(self) -> None:
        self.sid: str | None = None
        self.taking = False
        self.failed_unsaved = False

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if self.sid is None and not self.taking and not _reads(sql):
            self.taking = True  # the SAVEPOINT statement itself passes through here
            try:
                self.sid = transaction.savepoint()
            finally:
                self.taking = False
        try:
            return execute(sql, params, many, context)
        except DatabaseError:
            self.failed_unsaved = self.failed_unsaved or self.sid is None
            raise


def _reads(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "SELECT"


@contextmanager
def atomic() -> Iterator[None]:
    """A nested atomic block that costs no statement unless it writes (see the module)."""
    # The default connection itself, looked up once: each use of the ``connection`` proxy
    # looks it up again in the thread's connections, and a batch runs this for every message.
    database = transaction.get_connection()
    if not database.in_atomic_block or database.needs_rollback:
        with transaction.atomic():
            yield
        return
    first_write = _FirstWrite()
    mark = len(database.run_on_commit)
    try:
        with database.execute_wrapper(first_write), transaction.atomic(savepoint=False):
            yield
    except BaseException:
        _undo(first_write, mark)
        raise
    if database.needs_rollback:  # a database error caught inside: undone, as Django would
        _undo(first_write, mark)
    elif first_write.sid is not None:
        transaction.savepoint_commit(first_write.sid)


def _undo(first_write: _FirstWrite, mark: int) -> None:
    """Undo what the block did: its writes (its savepoint), its on-commit callbacks."""
    if first_write.failed_unsaved:
        return  # a statement failed before any savepoint: the transaction stays marked
    # The block's own atomic marked the transaction for rollback: undone here instead.
    transaction.set_rollback(False)
    if first_write.sid is not None:
        transaction.savepoint_rollback(first_write.sid)
        transaction.savepoint_commit(first_write.sid)  # released: never used again
    # A new list, as Django's own rollback makes (tablehub/until_commit.py relies on it).
    connection.run_on_commit = connection.run_on_commit[:mark]
