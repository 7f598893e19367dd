"""Helpers for tests: staff users in their role groups, rounds played through the real
services (bets as the stations place them, cards and decisions through the round writer),
and the closing of the consumers' database connection after a websocket test."""

from __future__ import annotations

import ast
import gc
import importlib
import os
import subprocess
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Group, Permission, User
from django.db import connection, connections

from rounds import writer
from rounds.engine import CardDrawn, Decision, parse_card
from rounds.models import Round
from stations.commands import place_bets
from stations.models import Station
from tablehub import roles
from tablehub.models import Table

STAFF_ROLES = (roles.FLOOR_MANAGER, roles.AUDITOR)  # the roles that use the admin
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
async def consumers_connection_closed():
    """Imported into a test module (autouse), closes after each of its tests the database
    connection of asgiref's sync thread, where the consumers under test did their database
    work, so that the test database can be dropped afterwards."""
    yield
    await database_sync_to_async(connections.close_all)()


# The data migrations that give the role groups their permissions, in order.
ROLE_MIGRATIONS = (
    "tablehub.migrations.0008_role_permissions",
    "tablehub.migrations.0018_read_protection_and_integrity_logs",
    "tablehub.migrations.0020_read_dealer_statistics",
    "tablehub.migrations.0022_read_meters",
    "tablehub.migrations.0025_stadium",
    "stations.migrations.0011_seat_roles",
)


def parse_source(path: Path) -> ast.Module:
    """A source file's syntax tree, parsed with the garbage collector paused. Python 3.11
    keeps the AST builder's recursion count in state shared by the interpreter: a collection
    during the build can run a finalizer that formats a traceback (which parses source too)
    or let another thread parse, and the build then fails with "SystemError: AST
    constructor recursion depth mismatch" (CPython gh-106905). It did once in CI."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(path.read_text(), filename=str(path))
    finally:
        if enabled:
            gc.enable()


def role_permissions() -> dict[str, list[tuple[str, str]]]:
    """Each role's permissions (app label, codename), as the data migrations give them."""
    wanted: dict[str, list[tuple[str, str]]] = {}
    for name in ROLE_MIGRATIONS:
        for role, perms in importlib.import_module(name).ROLE_PERMISSIONS.items():
            wanted.setdefault(role, []).extend(perms)
    return wanted


def ensure_role_permissions() -> None:
    """Give the role groups their permissions again (a transactional test may have flushed
    what the data migrations wrote)."""
    for role, perms in role_permissions().items():
        group, _ = Group.objects.get_or_create(name=role)
        if group.permissions.count() == len(perms):
            continue
        group.permissions.set(
            [
                Permission.objects.get(content_type__app_label=app, codename=codename)
                for app, codename in perms
            ]
        )


def make_staff(username: str, role: str | None, password: str = "pw-" + "x" * 12) -> User:
    """A user in ``role`` (None: a superuser); floor managers and auditors are staff."""
    if role is None:
        return User.objects.create_superuser(username, password=password)
    ensure_role_permissions()
    user = User.objects.create_user(username, password=password, is_staff=role in STAFF_ROLES)
    user.groups.add(Group.objects.get(name=role))
    return user


def play(
    table: Table,
    bets: list[tuple[Station, int, str, str]],
    cards: str,
    decisions: Sequence[tuple[str, str]] = (),
) -> Round:
    """Open a round, place ``bets`` (station, box, code, stake), close bets, then deal
    ``cards`` one at a time; a decision ``(station name, action)`` is made whenever the
    round asks that station (before the next card)."""
    round = writer.open_round(table)
    by_station: dict[Station, list[tuple[int, str, Decimal]]] = {}
    for station, box, code, stake in bets:
        by_station.setdefault(station, []).append((box, code, Decimal(stake)))
    for station, placed in by_station.items():
        place_bets(station, placed)  # one group per station, checked as a whole
    writer.close_bets(round.pk)
    pending = list(decisions)
    for card in cards.split():
        _decide(round, pending)
        writer.record(round.pk, CardDrawn(parse_card(card)))
    _decide(round, pending)
    round.refresh_from_db()
    return round


def _decide(round: Round, pending: list[tuple[str, str]]) -> None:
    while pending and pending[0][0] in writer.state(round.pk).prompted_stations:
        station, action = pending.pop(0)
        writer.record(round.pk, Decision(station, action))


async def drain(communicator, frames: list, wait: float = 0.3) -> list:
    """Collect every frame a test's websocket gets until it is quiet. (A receive that times
    out would cancel the application under test, so silence is checked with
    receive_nothing.)"""
    while not await communicator.receive_nothing(timeout=wait):
        frames.append(await communicator.receive_json_from())
    return frames


async def ask(communicator, frames: list, message: dict) -> dict:
    """Send a command over a test's websocket; collect frames until its reply, then the
    events that follow it. Returns the reply."""
    await communicator.send_json_to(message)
    while True:
        frame = await communicator.receive_json_from(timeout=10)
        frames.append(frame)
        if frame.get("type") == "reply" and frame.get("client_id") == message.get("client_id"):
            await drain(communicator, frames, 0.1)
            return frame


def database_url() -> str:
    """The test database, as a URL for the processes a test starts (servers, workers)."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def server_env(redis_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of the processes a test starts (servers, workers, beat, a shell):
    the test database, the embedded default without ``redis_url``, Celery timers and the
    Redis layer with it; ``extra`` on top."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "TABLEHUB_TIMERS")}
    env |= {
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
        "TABLEHUB_WARM_PARSHEETS": "false",
        "DB_CONN_MAX_AGE": "0",
    }
    if redis_url:
        env |= {"REDIS_URL": redis_url, "TABLEHUB_TIMERS": "celery"}
    else:
        env |= {"TABLEHUB_TIMERS": "inprocess"}
    return env | extra


def django_shell(env: dict[str, str], code: str) -> None:
    """Run ``code`` in a process of its own with ``env`` (``manage.py shell -c``); its
    failure fails the test with the end of what it wrote to stderr."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        timeout=60,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
