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
"""

from __future__ import annotations

from typing import Any

from django.db import models


class RowsJSONField(models.JSONField):
    """A ``JSONField`` whose bulk inserts are rows of values, never unnested arrays (see the
    module)."""

    def get_placeholder(self, value: Any, compiler: Any, connection: Any) -> str:
        return "%s"
