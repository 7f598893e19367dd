"""Reads whose SQL the ORM builds once: the hot queries a batch of station messages runs.

Building a queryset's SQL (its filters, joins and selected columns) costs more than running
it: measured, 0.14 ms of the 0.22 ms of a small read on SQLite, about 1 ms of a locking
read with three tables joined. A batch (stations/batches.py) runs a dozen such reads
whatever its size, so on a quiet table a lone command paid them all, and a burst pays them
once per batch.

A ``CompiledQuery`` is written as a queryset, with ``Param("name")`` where a value goes::

    SESSIONS = CompiledQuery(
        lambda: PlayerSession.objects.filter(station_id__among=Param("ids"), closed_at=None)
    )
    SESSIONS.list(ids=[3, 4])

An update is written as the queryset of the rows it changes and the fields it sets, each
set to the value of its name::

    HEAD_MOVED = CompiledUpdate(lambda: ChainHead.objects.filter(pk=Param("id")), "position")
    HEAD_MOVED.run(id=7, position=12)

(no signal is sent, as with ``QuerySet.update``: a model whose saves are listened to, the
round's, saves through ``Model.save``).

On first use on a database connection the ORM compiles it as usual; after that the same SQL
runs with the new values, and the rows become model instances (or values) through the same
Django code as any queryset's, with the compiler of the first use. Anything the ORM would
decide from a value (an empty list, a None) is decided in the queryset, not by the value:
a ``Param`` is always one placeholder, so ``None`` given for it finds nothing (write
``isnull`` in the queryset instead). ``__among`` with a ``Param`` is one array parameter
on PostgreSQL and one JSON parameter on SQLite (tablehub/lookups.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Field, IntegerField, QuerySet
from django.db.models.expressions import Expression
from django.db.models.sql import UpdateQuery
from django.db.models.sql.constants import ROW_COUNT
from django.db.transaction import TransactionManagementError

T = TypeVar("T")


class _Slot:
    """Where a ``Param``'s value goes in a compiled query's parameters, and how it is
    written there (``adapt``: e.g. ids as one JSON array, for ``__among`` on SQLite)."""

    __slots__ = ("name", "adapt")

    def __init__(self, name: str, adapt: Callable[[Any], Any] | None = None) -> None:
        self.name, self.adapt = name, adapt

    def bind(self, values: dict[str, Any]) -> Any:
        value = values[self.name]
        return value if self.adapt is None else self.adapt(value)


class Param(Expression):
    """A named value of a ``CompiledQuery``, given when it runs (one placeholder)."""

    def __init__(self, name: str, output_field: Field | None = None) -> None:
        super().__init__(output_field=output_field or IntegerField())
        self.name = name

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[Any, ...]]:
        # Written as the ORM writes a value of its field (a time on SQLite: its UTC text).
        field = self.output_field
        return "%s", (self.slot(lambda value: field.get_db_prep_value(value, connection)),)

    def slot(self, adapt: Callable[[Any], Any] | None = None) -> _Slot:
        """This value's place among the parameters (for a lookup that writes its own SQL)."""
        return _Slot(self.name, adapt)

    def __repr__(self) -> str:
        return f"Param({self.name!r})"


_NUMBERS = itertools.count()


class _PerConnection:
    """What a compiled statement keeps, once per database connection (this thread's, of the
    one database: a compiler serves one connection), made by ``_compile`` on first use."""

    def __init__(self) -> None:
        # A number of its own, never reused: an ``id`` is, once its object is freed, and a
        # new statement found the freed one's SQL on the connection (tests make and drop
        # statements; the server's live as long as the process).
        self._key = f"_tablehub_compiled_{next(_NUMBERS)}"

    def _compiled(self) -> Any:
        connection = connections[DEFAULT_DB_ALIAS]
        compiled = connection.__dict__.get(self._key)
        if compiled is None:
            compiled = connection.__dict__[self._key] = self._compile()
        return compiled

    def _compile(self) -> Any:
        raise NotImplementedError


class CompiledQuery(_PerConnection, Generic[T]):
    """A queryset (``build`` returns it) compiled once per database connection."""

    def __init__(self, build: Callable[[], QuerySet[Any, T]]) -> None:
        super().__init__()
        self.build = build

    def list(self, **values: Any) -> list[T]:
        """The rows, with ``values`` for the ``Param``s."""
        queryset, compiler = self._compiled()
        if queryset.query.select_for_update and compiler.connection.get_autocommit():
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction."
            )
        _bind(compiler, values)
        iterable: Any = queryset._iterable_class
        rows = iterable(queryset)  # as iterating the queryset would, with this compiler
        return list(rows)

    def first(self, **values: Any) -> T | None:
        """The first row (the queryset is ordered and sliced ``[:1]`` by its author)."""
        rows = self.list(**values)
        return rows[0] if rows else None

    def _compile(self) -> tuple[QuerySet[Any, T], Any]:
        queryset = self.build()
        compiler = _compiler(queryset.query)
        # Every run of this queryset gets the compiler that knows its columns, and the
        # columns' converters (from the database's values to Python's) found once.
        queryset.query.get_compiler = lambda *args, **kwargs: compiler  # type: ignore[method-assign]
        converters = compiler.get_converters(
            [column[0] for column in compiler.select[0 : compiler.col_count]]
        )
        compiler.get_converters = lambda expressions: converters
        return queryset, compiler


class CompiledUpdate(_PerConnection):
    """An update of the rows ``build`` returns, setting ``fields`` (each to the value given
    under its name), compiled once per database connection. No signals are sent and no
    field's ``pre_save`` runs, as with ``QuerySet.update``."""

    def __init__(self, build: Callable[[], QuerySet[Any, Any]], *fields: str) -> None:
        super().__init__()
        self.build, self.fields = build, fields

    def run(self, **values: Any) -> int:
        """How many rows it changed."""
        compiler = self._compiled()
        _bind(compiler, values)
        with transaction.mark_for_rollback_on_error(using=DEFAULT_DB_ALIAS):
            return compiler.execute_sql(ROW_COUNT)

    def _compile(self) -> Any:
        queryset = self.build()
        model = queryset.model
        query: Any = queryset.query.chain(UpdateQuery)
        query.add_update_values(
            {name: Param(name, model._meta.get_field(name)) for name in self.fields}
        )
        query.clear_select_clause()
        return _compiler(query)


def _compiler(query: Any) -> Any:
    """The query's compiler with its SQL built (its columns known), and that SQL and its
    parameters (``Param``s among them) kept on it for ``_bind``."""
    compiler = query.get_compiler(using=DEFAULT_DB_ALIAS)
    sql, params = compiler.as_sql()
    compiler.tablehub_sql, compiler.tablehub_params = sql, tuple(params)
    return compiler


def _bind(compiler: Any, values: dict[str, Any]) -> None:
    """Make the compiler run its first use's SQL with ``values`` in the ``Param``s' places
    (it runs the SQL its ``as_sql`` gives)."""
    params = compiler.tablehub_params
    missing = {p.name for p in params if type(p) is _Slot} - values.keys()
    if missing:
        raise TypeError(f"missing values for {sorted(missing)}")
    bound = [p.bind(values) if type(p) is _Slot else p for p in params]
    sql = compiler.tablehub_sql
    compiler.as_sql = lambda *args, **kwargs: (sql, bound)
