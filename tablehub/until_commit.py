"""What a transaction holds until it commits, found again: its on-commit callbacks by class.

The round writer, the chain, the ledger and the meters keep what a transaction has done but
not yet written or released (an engine to put back in the cache, events and bets to insert,
chain heads and stations locked, meter changes) as on-commit callbacks of classes of their
own: Django drops the callbacks of a rolled-back savepoint, and what they held with them, so
a refused message leaves nothing behind. Django has no public accessor for the callbacks
waiting; they are the connection's ``run_on_commit`` list.

A batch of a thousand station messages registers thousands of callbacks, and each message
looked some up again: a scan of the whole list per lookup made a batch's cost grow with the
square of its size. Here each thread keeps an index of that list by class, extended with
the entries added since the last lookup. Django adds with ``append`` and drops (a savepoint
rolled back, the transaction committed or rolled back) by replacing the list with a new
one: a list that is not the one indexed is indexed afresh.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from django.db import connection

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


class _Index(threading.local):
    def __init__(self) -> None:
        self.source: list[Any] | None = None  # the connection's list indexed
        self.seen = 0  # how many of its entries
        self.kinds: dict[type, list[Any]] = {}
        self.keyed: dict[tuple[type, Callable[[Any], Any]], tuple[int, dict[Any, Any]]] = {}


_INDEX = _Index()


def _index() -> _Index:
    pending = connection.run_on_commit
    index = _INDEX
    if index.source is not pending or index.seen > len(pending):
        index.source, index.seen, index.kinds, index.keyed = pending, 0, {}, {}
    if index.seen < len(pending):
        for entry in pending[index.seen :]:  # (savepoint ids, callback, robust)
            index.kinds.setdefault(type(entry[1]), []).append(entry[1])
        index.seen = len(pending)
    return index


def waiting(kind: type[T]) -> Sequence[T]:
    """This thread's transaction's on-commit callbacks of class ``kind`` (not its
    subclasses), in the order they were registered. Read only: do not change it."""
    return _index().kinds.get(kind, ())


def last_by(kind: type[T], key: Callable[[T], K]) -> dict[K, T]:
    """The last waiting callback of class ``kind`` for each value of ``key`` (a function of
    the callback that never changes for it: pass the same function each time, it is how the
    lookup is kept). Read only: do not change it."""
    index = _index()
    callbacks = index.kinds.get(kind, [])
    done, found = index.keyed.get((kind, key), (0, {}))
    for callback in callbacks[done:]:
        found[key(callback)] = callback
    index.keyed[(kind, key)] = (len(callbacks), found)
    return found
