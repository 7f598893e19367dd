"""``manage.py play_scenario FILE``: play one scenario file through the rules engine.

Exit status 0 with the outcome JSON on stdout; exit status 2 with one line on
stderr when the scenario is invalid (spec/scenario-format.md); with ``--live --url``, exit
status 1 with one line when the configured database is unreachable or not migrated.

``--live`` plays it through the real table instead (rounds/live_replay.py). Without
``--url`` the server runs in this process on a throwaway database of its own (a temporary
SQLite file, or a temporary PostgreSQL database when DATABASE_URL names PostgreSQL) and
its own in-memory channel layer, and the database is removed when the command ends
(``--keep``: kept, its DATABASE_URL on stderr): nothing of the replay reaches the configured
database. With ``--url`` the database is that server's: the replay table stays, marked as
one.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from channels.layers import channel_layers
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from payouts.maingame import abandoned
from payouts.specials import parse_paytables
from rounds.engine import EngineError, play_scenario
from rounds.engine.scenario import parse_scenario
from rounds.scenario_file import EXIT_INVALID, read_scenario


class Command(BaseCommand):
    help = "Play a scenario file (spec/scenario-format.md) through the rules engine."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", help='scenario JSON file, or "-" for stdin')
        parser.add_argument(
            "--live",
            action="store_true",
            help="play it through the real table: server, websockets, database and ledger",
        )
        parser.add_argument("--url", help="with --live: a running server, e.g. ws://127.0.0.1:8000")
        parser.add_argument("--timer-ms", type=int, help="with --live: every timer, shortened")
        parser.add_argument(
            "--keep",
            action="store_true",
            help="with --live and no --url: keep the throwaway database for game recall (its "
            "DATABASE_URL on stderr); with --url the replay table always stays",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            data = read_scenario(options["file"], sys.stdin)
            if not options["live"]:
                outcome = play_scenario(data, parse_paytables, abandoned.for_scenario)
            elif options["url"]:
                refuse_unmigrated(self.stderr.write)
                outcome = live_replay().play_live(data, options["url"], options["timer_ms"])
            else:
                outcome = self.play_apart(data, options["timer_ms"], options["keep"])
        except EngineError as exc:
            self.stderr.write(exc.line())
            sys.exit(EXIT_INVALID)
        self.stdout.write(json.dumps(outcome, indent=2))

    def play_apart(self, data: Any, timer_ms: int | None, keep: bool) -> dict[str, Any]:
        """``--live`` without ``--url``: the server in this process, on a throwaway database
        and channel layer of its own, removed afterwards however the replay ends."""
        # An invalid scenario is told before a database is made.
        parse_scenario(data, parse_paytables)
        replay = live_replay()
        # Our own server only: a shared Redis layer would mix our table's groups with those
        # of a real table with the same id in the configured database.
        settings.CHANNEL_LAYERS = {"default": {"BACKEND": "tablehub.layers.TableChannelLayer"}}
        channel_layers.backends.clear()
        with terminate_as_exit(), replay.throwaway_database(keep, self.stderr.write):
            return replay.play_live(data, None, timer_ms)


def refuse_unmigrated(write: Any) -> None:
    """With --url the replay table is made in the configured database: refuse, in one line
    and with exit status 1, one that is unreachable or not migrated (no traceback)."""
    try:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        write(f"the database cannot be read: {str(exc).splitlines()[0]}")
        sys.exit(1)
    if pending:
        write(
            f"the database is not migrated: run manage.py migrate first "
            f"({len(pending)} migrations to apply)"
        )
        sys.exit(1)


def live_replay() -> Any:
    """rounds.live_replay, imported only for --live: the engine path needs no models, server
    or websockets."""
    import rounds.live_replay

    return rounds.live_replay


@contextmanager
def terminate_as_exit() -> Iterator[None]:
    """In the main thread, SIGTERM ends the command as an exit does (``finally`` blocks run,
    the throwaway database is removed) instead of at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
