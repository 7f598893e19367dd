"""``play_scenario --live`` without ``--url`` plays on a throwaway database of its own and
leaves the configured one untouched (README, "Scenarios"; nothing deletes a ledger entry).

The command runs as a process of its own whose DATABASE_URL is the test database (which
holds a table with a settled round and its ledger); the rows of the test database are
counted before and after. The throwaway database is a SQLite file in a temporary folder
(the command's TMPDIR is a folder of the test) or a PostgreSQL database
``tablehub_replay_<random>``: gone afterwards, however the replay ended, or kept with
``--keep`` for game recall. (On a running server, ``--url``, the replay table stays:
test_live_replay.py.)
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from payouts.models import LedgerEntry
from payouts.specials import parse_paytables
from rounds.engine import RuleSet, play_scenario
from rounds.models import Round, RoundEvent
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import database_url, play

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "tests" / "scenarios" / "rule_spec_example.json"
TIMER_MS = 3000  # as in test_live_replay.py: a station's answer always beats the timer
INVALID = {  # fails on the server, mid-round: the exit status 2 path
    "stations": {
        "s1": {"credits": "100", "bets": {"1": {"main": "10"}}, "actions": ["hit", "double"]}
    },
    "shoe": ["2S", "5H", "3D", "4C", "2C", "2D", "4S", "6D", "6S", "9H"],
}
KEPT = re.compile(r"the replay's database is kept: DATABASE_URL=(\S+)\n")


def counts() -> dict[str, int]:
    models = (Jurisdiction, Table, TableConfig, Station, Round, RoundEvent, LedgerEntry)
    return {model.__name__: model.objects.count() for model in models}


@pytest.fixture
def seeded(transactional_db) -> dict[str, int]:
    """A normal table with a settled round (committed, so the command's process could see
    it): the rows of the test database, counted."""
    jurisdiction = Jurisdiction.objects.create(code="home", name="Home")
    table = Table.objects.create(name="main-1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "100", key="start")
    round = play(table, [(station, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    assert round.phase == "settled"
    before = counts()
    assert before["Round"] == 1 and before["LedgerEntry"] > 4
    return before


def play_live_command(
    main_url: str, tmp: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """``manage.py play_scenario --live`` with ``main_url`` as DATABASE_URL and ``tmp`` as
    its temporary folder."""
    tmp.mkdir(exist_ok=True)
    env = os.environ | {
        "DATABASE_URL": main_url,
        "TMPDIR": str(tmp),
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
    }
    return subprocess.run(
        [sys.executable, "manage.py", "play_scenario", "--live", "--timer-ms", str(TIMER_MS)]
        + list(args),
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
    )


def engine_output(path: Path) -> str:
    """What ``play_scenario FILE`` prints (the engine path): --live prints exactly that."""
    outcome = play_scenario(json.loads(path.read_text(), parse_float=Decimal), parse_paytables)
    return json.dumps(outcome, indent=2) + "\n"


# -- the embedded default: a temporary SQLite file ---------------------------------------------


@pytest.fixture
def embedded(tmp_path) -> tuple[str, Path | None]:
    """The command's configured database on the embedded default (SQLite): the test database
    when it is SQLite; where the tests run on PostgreSQL (CI), a SQLite file that does not
    exist, and must not come to exist. Its path then, else None."""
    if connection.vendor == "sqlite":
        return database_url(), None
    never = tmp_path / "configured.sqlite3"
    return f"sqlite:///{never}", never


def assert_untouched(before: dict[str, int], never: Path | None) -> None:
    assert counts() == before
    assert never is None or not never.exists()


def test_live_on_the_embedded_default_leaves_the_database_untouched(seeded, embedded, tmp_path):
    main_url, never = embedded
    result = play_live_command(main_url, tmp_path / "tmp", str(SCENARIO))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == engine_output(SCENARIO)
    assert_untouched(seeded, never)
    assert list((tmp_path / "tmp").iterdir()) == []  # the temporary file and its folder: gone


def test_a_failed_live_replay_removes_its_database_too(seeded, embedded, tmp_path):
    main_url, never = embedded
    result = play_live_command(main_url, tmp_path / "tmp", "-", stdin=json.dumps(INVALID))
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr == "station s1, box 1: double is not allowed on a 3-card hand [not_allowed]\n"
    )
    assert_untouched(seeded, never)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_keep_keeps_the_throwaway_database_for_game_recall(seeded, embedded, tmp_path):
    main_url, never = embedded
    result = play_live_command(main_url, tmp_path / "tmp", "--keep", str(SCENARIO))
    assert result.returncode == 0 and result.stdout == engine_output(SCENARIO)
    kept = KEPT.fullmatch(result.stderr)
    assert kept is not None, result.stderr
    path = Path(kept[1].removeprefix("sqlite:///"))
    assert kept[1].startswith("sqlite:///") and path.parent.parent == tmp_path / "tmp"
    assert_untouched(seeded, never)
    with closing(sqlite3.connect(path)) as db:
        assert db.execute(
            "SELECT name LIKE 'replay-%', is_replay FROM tablehub_table"
        ).fetchall() == [(1, 1)]
        (phase, events), *more = db.execute(
            "SELECT phase, (SELECT count(*) FROM rounds_roundevent WHERE round_id = r.id)"
            " FROM rounds_round r"
        ).fetchall()
        assert (phase, more) == ("settled", []) and events > 10
        assert db.execute("SELECT sum(amount) = 0 FROM payouts_ledgerentry").fetchone() == (1,)


# -- PostgreSQL: a temporary database, dropped -------------------------------------------------


def replay_databases() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", ["tablehub\\_replay\\_%"]
        )
        return {name for (name,) in cursor.fetchall()}


@pytest.mark.services
def test_live_on_postgresql_leaves_the_database_untouched(postgres_url, seeded, tmp_path):
    assert connection.vendor == "postgresql"
    others = replay_databases()
    result = play_live_command(database_url(), tmp_path / "tmp", str(SCENARIO))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == engine_output(SCENARIO)
    assert counts() == seeded
    assert replay_databases() == others  # the temporary database is dropped

    result = play_live_command(database_url(), tmp_path / "tmp", "-", stdin=json.dumps(INVALID))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.endswith("double is not allowed on a 3-card hand [not_allowed]\n")
    assert counts() == seeded
    assert replay_databases() == others  # dropped on the exit status 2 path as well


@pytest.mark.services
def test_keep_on_postgresql_keeps_the_temporary_database(postgres_url, seeded, tmp_path):
    others = replay_databases()
    result = play_live_command(database_url(), tmp_path / "tmp", "--keep", str(SCENARIO))
    kept_names = replay_databases() - others
    try:
        assert result.returncode == 0 and result.stdout == engine_output(SCENARIO)
        kept = KEPT.fullmatch(result.stderr)
        assert kept is not None, result.stderr
        (name,) = kept_names
        assert re.fullmatch(r"tablehub_replay_[0-9a-f]{12}", name)
        assert kept[1].startswith("postgres://") and kept[1].endswith(f"/{name}")
        assert counts() == seeded
        conninfo = "postgresql://" + database_url().split("://", 1)[1].rsplit("/", 1)[0]
        with psycopg.connect(f"{conninfo}/{name}") as db:
            tables = db.execute("SELECT name, is_replay FROM tablehub_table").fetchall()
            assert len(tables) == 1 and tables[0][1] is True
            phases = db.execute("SELECT phase FROM rounds_round").fetchall()
            assert phases == [("settled",)]
    finally:
        with connection.cursor() as cursor:
            for name in kept_names:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- refusals: as the engine path, in one line -------------------------------------------------

ABOVE_CREDITS = {
    "a double": (
        {"credits": "15", "actions": ["double"]},
        ["2S", "5H", "3D", "4C", "2C", "2D", "4S", "6D", "6S", "9H"],
        "station s1, box 1: credits 5.00 do not cover the double stake 10.00",
    ),
    "an insurance": (
        {"credits": "10", "actions": ["insure"]},
        ["2S", "AH", "3D", "4C", "9S", "TD", "TC"],
        "station s1, box 1: credits 0.00 do not cover the insurance stake 5.00",
    ),
}


@pytest.mark.parametrize("station, shoe, line", ABOVE_CREDITS.values(), ids=list(ABOVE_CREDITS))
def test_live_refuses_what_the_credits_do_not_cover_as_the_engine_does(
    embedded, tmp_path, station, shoe, line
):
    """The engine path exits 2 with one line (tests/engine/test_invalid_scenarios.py); so does
    --live, with the server's code after the line."""
    data = {"stations": {"s1": {"bets": {"1": {"main": "10"}}, **station}}, "shoe": shoe}
    main_url, _ = embedded
    result = play_live_command(main_url, tmp_path / "tmp", "-", stdin=json.dumps(data))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"{line} [insufficient_credits]\n"


def test_live_refuses_an_unmigrated_database_in_one_line(tmp_path):
    empty = tmp_path / "empty.sqlite3"
    result = play_live_command(
        f"sqlite:///{empty}", tmp_path / "tmp", "--url", "ws://127.0.0.1:9", str(SCENARIO)
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("the database is not migrated: run manage.py migrate")
