"""The test run's PostgreSQL backend: Django's, except that emptying the database between
transactional tests deletes the rows instead of truncating the tables.

pytest-django empties the test database after every test that commits (``transactional_db``,
the live servers, the websockets) with ``flush``, which on PostgreSQL is one ``TRUNCATE`` of
every table (49): about 0.2 s each time, because PostgreSQL gives each table new files. A
test leaves a few rows, and deleting them takes a few milliseconds: over the suite's four
hundred such tests that was more than a minute of CI. Django's foreign keys are
``DEFERRABLE INITIALLY DEFERRED``, and the flush runs in one transaction, so the order of the
deletes does not matter: the keys are checked at its commit, when every row is gone.

The content types and permissions stay: the flush's ``post_migrate`` would write the same
rows again (what a migration adds is in the test database from its start, and no test
makes or removes one), and finding them there costs it a few reads instead.

A flush that restarts the sequences (``reset_sequences=True``) still truncates.

At the end of the run the test database is dropped ``WITH (FORCE)``: an in-process server
that a test started (a live replay's: Twisted cannot be restarted, so it serves until the
process ends) may still hold connections to it, and a plain ``DROP DATABASE`` then failed
with "being accessed by other users", leaving the database behind for the next run.
"""

from collections.abc import Sequence

from django.core.management.color import Style
from django.db.backends.postgresql import base, creation, operations

KEPT = {"django_content_type", "auth_permission"}


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(
        self,
        style: Style,
        tables: Sequence[str],
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if reset_sequences or not tables:
            return super().sql_flush(
                style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return ["SET CONSTRAINTS ALL DEFERRED"] + [
            f"DELETE FROM {self.quote_name(table)}" for table in tables if table not in KEPT
        ]


class DatabaseCreation(creation.DatabaseCreation):
    def _destroy_test_db(self, test_database_name: str, verbosity: int) -> None:
        with self.connection._nodb_cursor() as cursor:
            quoted = self.connection.ops.quote_name(test_database_name)
            cursor.execute(f"DROP DATABASE {quoted} WITH (FORCE)")


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
    creation_class = DatabaseCreation
