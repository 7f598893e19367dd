"""Model fields of our own: only where Django's own need a different way to be written.

``RowsJSONField``: a JSON column that a bulk insert writes as rows of values. Django 5.2
writes a PostgreSQL ``bulk_create`` as one array per column unnested on the server
(``INSERT ... SELECT * FROM UNNEST(%s::jsonb[], ...)``). With the client-side binding that
Django uses with psycopg, each JSON text put in such an array is escaped by a regular
expression substitution per double quote, in Python: a stored reply to a station message (a
whole state, ~140 quotes) cost 0.37 ms of CPU a row that way, 0.11 ms as a row of values
(a batch of 256 on this machine: 94 ms against 29 ms). A field with its own placeholder is
one that Django does not unnest (``SQLInsertCompiler.assemble_as_sql``), so the model's
bulk inserts are plain ``VALUES`` rows. Nothing else changes: same column, same values.

A value already encoded (``JSONText``, tablehub/jsontext.py) is written as it is, not
encoded again: a batch's stored replies are encoded once, and the same text goes to the
stations (stations/commands.py, ``Reply``).
"""

from __future__ import annotations

import json
from typing import Any

from django.db import models

from tablehub.jsontext import JSONText


class _AsEncoded(json.JSONEncoder):
    """The encoder of a ``JSONText``: its text, as it is."""

    def encode(self, o: Any) -> str:
        return str(o) if isinstance(o, JSONText) else super().encode(o)


class RowsJSONField(models.JSONField):
    """A ``JSONField`` whose bulk inserts are rows of values, never unnested arrays (see the
    module)."""

    def get_placeholder(self, value: Any, compiler: Any, connection: Any) -> str:
        return "%s"

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if isinstance(value, JSONText):  # encoded already: the database's own wrapping only
            return connection.ops.adapt_json_value(value, _AsEncoded)
        return super().get_db_prep_value(value, connection, prepared)
