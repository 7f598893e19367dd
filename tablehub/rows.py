"""Inserting many new rows of one model in one statement, without the ORM's work per value.

A batch of station messages (stations/batches.py) inserts its stored replies, events, bets
and ledger entries, and a settlement its hands, a few hundred rows at a time. Django's
``bulk_create`` prepares every value through the field's chain of ``pre_save``,
``get_db_prep_save`` and the insert compiler's own checks: measured with
bench/batch_cost.py, a third of a batch's time on the database thread went to those inserts,
most of it to that preparation rather than to the database.

``insert_rows`` writes the same rows with the same values: a field whose value the database
driver takes as it is (whole numbers, text, booleans, foreign keys) is sent as it is, and
every other field (JSON, decimals, dates) through its own ``get_db_prep_save``, as Django
does. ``pre_save`` is called only where a field class has its own (``auto_now_add``). The
rows are chunked as Django chunks them (``bulk_batch_size``), each object gets its primary
key back (``RETURNING``, which PostgreSQL and SQLite 3.35+ both have), and an upsert's
``ON CONFLICT ... DO UPDATE`` sets a field to the new row's value as Django's does, or adds
the new row's value to it (``add``: a counter). Anything this does not cover (a model with
a database default, a field with its own SQL placeholder, an object with a primary key
already) is refused, not guessed. ``insert_values`` writes rows given as plain values by
field, where no model object is needed afterwards: making one costs about 10 us, and a
batch of bets made three a bet.

On PostgreSQL the rows go as one parameter, a JSON array of rows that the server takes
apart (``jsonb_array_elements``, each value cast to its column's type), not one placeholder
per value. psycopg keeps the parsed form of no query with more than 50 parameters
(``MAX_CACHED_STATEMENT_PARAMS``), so every insert of a batch (a few hundred rows, a
thousand or two values) had its placeholders parsed again and each value adapted to a
literal, in Python: 13 % of a decision batch's database thread under cProfile. JSON's C
encoder writes them instead; a message then costs the database thread 7 to 11 % less CPU
(bench/batch_cost.py, docs/benchmarks.md). The values are those the fields prepare for the
driver, written as text the column's type reads back exactly (a decimal as its digits, a
time in ISO 8601 with its offset, a JSON column's value as its JSON text). A value of any
other type is refused. The document is read as ``jsonb``, parsed once: as ``json`` (text)
each of a row's values was found by parsing the row again, and a batch of 256 stored
replies (about 1.4 KB each) took the server 11.4 ms to insert, against 7.9 ms.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from functools import cache
from typing import Any, TypeVar

from django.db import connections, models, router
from django.db.backends.postgresql.psycopg_any import Jsonb
from django.utils import timezone

from tablehub.fields import RowsJSONField

M = TypeVar("M", bound=models.Model)

# Fields whose value goes to the driver as the object holds it: their get_db_prep_save only
# checks or converts a value of the right type to itself.
_AS_IS = (
    models.IntegerField,  # AutoField and every integer field are subclasses
    models.CharField,
    models.TextField,
    models.BooleanField,
    models.ForeignKey,
)
Prepare = Callable[[Any, Any], Any]  # (an object or a row, the connection) -> its value


def insert_rows(
    model: type[M],
    objs: Iterable[M],
    *,
    update_on: Sequence[str] = (),
    update: Sequence[str] = (),
) -> list[M]:
    """Insert new objects of ``model`` (no primary key yet); they get theirs. With
    ``update_on`` (the fields of a unique constraint) and ``update``, a row that already
    exists has those fields updated instead (and its object gets no key back)."""
    objs = list(objs)
    for obj in objs:
        assert obj.pk is None, "insert_rows() writes new rows only"
    db = router.db_for_write(model)
    keys = _insert(db, model, objs, False, update_on, update, ())
    for obj, pk in zip(objs, keys or [None] * len(objs), strict=True):
        if pk is not None:
            obj.pk = pk
        obj._state.adding = False
        obj._state.db = db
    return objs


def insert_values(
    model: type[models.Model],
    rows: Iterable[Mapping[str, Any]],
    *,
    update_on: Sequence[str] = (),
    update: Sequence[str] = (),
    add: Sequence[str] = (),
) -> None:
    """``insert_rows`` of rows given as values by field (``attname``: ``station_id``), no
    model objects made: a batch's thousand bets need no thousand instances (about 10 us
    each). A field a row leaves out takes its default; an ``auto_now_add`` field is the
    time of the insert, as on a save. With ``update_on``, ``add`` names the fields whose
    value is added to the row already there (a counter: two writers never lose a count)."""
    _insert(router.db_for_write(model), model, list(rows), True, update_on, update, add)


def _insert(
    db: str,
    model: type[models.Model],
    items: list[Any],
    from_values: bool,
    update_on: Sequence[str],
    update: Sequence[str],
    add: Sequence[str],
) -> list[Any] | None:
    """Insert ``items`` (objects, or value rows ``from_values``) into database ``db``; the
    new keys in their order, or None for an upsert."""
    if not items:
        return None if update_on else []
    connection = connections[db]
    fields, prepares = _columns(model, connection.vendor, from_values)
    opts = model._meta
    quote = connection.ops.quote_name
    table = quote(opts.db_table)
    names = ", ".join(quote(_column(f)) for f in fields)
    head = f"INSERT INTO {table} ({names}) "
    if update_on:  # both databases speak ON CONFLICT ... DO UPDATE
        column = {n: quote(_column(opts.get_field(n))) for n in (*update_on, *update, *add)}
        sets = [f"{column[n]} = EXCLUDED.{column[n]}" for n in update]
        sets += [f"{column[n]} = {table}.{column[n]} + EXCLUDED.{column[n]}" for n in add]
        on = ", ".join(column[n] for n in update_on)
        tail = f" ON CONFLICT ({on}) DO UPDATE SET {', '.join(sets)}"
    else:
        assert not add, "add= is an upsert's: it needs update_on"
        tail = f" RETURNING {quote(_column(opts.pk))}"
    statements: Iterable[tuple[str, list[Any]]]
    if connection.vendor == "postgresql":  # every row in one JSON parameter
        rows = [[prepare(item, connection) for prepare in prepares] for item in items]
        document = json.dumps(rows, default=_as_json_text, separators=(",", ":"))
        statements = [(head + _from_json_rows(model, fields, connection) + tail, [document])]
    else:  # rows of placeholders, in chunks as Django's
        row = "(" + ", ".join(["%s"] * len(fields)) + ")"
        size = max(connection.ops.bulk_batch_size(fields, items), 1)
        statements = (
            (
                head + "VALUES " + ", ".join([row] * len(chunk)) + tail,
                [prepare(item, connection) for item in chunk for prepare in prepares],
            )
            for chunk in (items[start : start + size] for start in range(0, len(items), size))
        )
    keys: list[Any] = []
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)
            if not update_on:
                keys += [pk for (pk,) in cursor.fetchall()]
    return None if update_on else keys


_JSON_ROWS: dict[type[models.Model], str] = {}


def _from_json_rows(model: type[models.Model], fields: list[models.Field], connection: Any) -> str:
    """PostgreSQL's rows of ``model`` (its insert's ``fields``, in their order) from one JSON
    parameter: an array of rows, each an array of the columns' values as text, taken in the
    array's order (the keys come back in it)."""
    if model in _JSON_ROWS:
        return _JSON_ROWS[model]
    casts = []
    for n, field in enumerate(fields):
        db_type = field.db_type(connection)
        assert db_type, f"{field} has no column type"
        # The type without its size, as Django's own bulk insert: ``varchar`` refuses a
        # value too long for the column where ``varchar(40)`` would cut it.
        casts.append(f"(row.value->>{n})::{db_type.split('(')[0]}")
    values = ", ".join(casts)
    _JSON_ROWS[model] = (
        f"SELECT {values} FROM jsonb_array_elements(%s::jsonb) WITH ORDINALITY"
        f" AS row(value, n) ORDER BY row.n"
    )
    return _JSON_ROWS[model]


def _as_json_text(value: Any) -> str:
    """A prepared value that JSON has no type for, as the text its column's type reads."""
    if isinstance(value, Decimal):
        return str(value)  # its digits, to the last: "10.50", never a float
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()  # with the offset Django gives an aware time
    if isinstance(value, Jsonb):  # a JSON column's value: its JSON text, cast back to json
        return (value.dumps or json.dumps)(value.obj)
    raise TypeError(f"no JSON text for a {type(value).__name__} in an insert: {value!r}")


def _column(field: object) -> str:
    assert isinstance(field, models.Field) and field.column, f"{field} is not a column"
    return field.column


@cache
def _columns(
    model: type[models.Model], vendor: str, from_values: bool
) -> tuple[list[models.Field], list[Prepare]]:
    """The fields an insert writes (every concrete one but the automatic key) and, for each,
    how an object's value (or, ``from_values``, a value row's) becomes the value sent
    (``vendor``: a field's preparation may depend on the database, so the cache is by
    vendor)."""
    fields = [
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and isinstance(f, models.AutoField)) and not f.generated
    ]
    for field in fields:
        if field.has_db_default():
            raise NotImplementedError(f"{model.__name__}.{field.name} has a database default")
        if hasattr(field, "get_placeholder") and not isinstance(field, RowsJSONField):
            raise NotImplementedError(f"{model.__name__}.{field.name} has its own placeholder")
    make = _from_value if from_values else _from_object
    return fields, [make(field) for field in fields]


def _from_object(field: models.Field) -> Prepare:
    attname = field.attname
    own_pre_save = type(field).pre_save is not models.Field.pre_save
    if isinstance(field, _AS_IS) and not own_pre_save:
        return lambda obj, _connection: getattr(obj, attname)

    prepared = _prepared(field)

    def prepare(obj: models.Model, connection: Any) -> Any:
        value = field.pre_save(obj, True) if own_pre_save else getattr(obj, attname)
        return prepared(value, connection)

    return prepare


def _from_value(field: models.Field) -> Prepare:
    attname = field.attname
    if type(field).pre_save is not models.Field.pre_save and not isinstance(
        field, models.DateField
    ):
        raise NotImplementedError(f"{field} prepares its value on a save: insert an object")
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        if not isinstance(field, models.DateTimeField):
            raise NotImplementedError(f"{field} sets a date of its own")
        # As its pre_save on an insert: the time of the insert, whatever the row says.
        return lambda _row, connection: field.get_db_prep_save(timezone.now(), connection)
    if isinstance(field, _AS_IS):
        return lambda row, _connection: row[attname] if attname in row else field.get_default()

    prepared = _prepared(field)

    def prepare(row: Mapping[str, Any], connection: Any) -> Any:
        value = row[attname] if attname in row else field.get_default()
        return prepared(value, connection)

    return prepare


def _prepared(field: models.Field) -> Prepare:
    """How ``field`` prepares a value for the driver: its ``get_db_prep_save``, but a plain
    decimal field's finite ``Decimal`` or None as it is. That is what the field's chain of
    four calls gives back for them (``to_python`` copies a Decimal, and no backend of Django
    5.2 adapts one: tests/test_rows.py checks it), at 2.5 us a value; a settlement prepares
    four a hand."""
    if type(field) is not models.DecimalField:
        return field.get_db_prep_save

    def decimal(value: Any, connection: Any) -> Any:
        if value is None or (type(value) is Decimal and value.is_finite()):
            return value
        return field.get_db_prep_save(value, connection)  # a text, a float, an int: its checks

    return decimal
