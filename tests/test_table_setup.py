"""Setting a table up by script (docs/operations.md): create_table, create_stations and
set_reader_key, and the credentials they print let a station and a card reader in over
real websockets."""

import io
import json
import sys

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections

from stations.models import Station
from tablehub.models import Jurisdiction, Table
from tests.fuzz.support import connect

CONFIG = {
    "rules": {"decks": 6},
    "limits": {"main": ["1", "500"], "special": ["1", "100"]},
    "timers": {"betting": 20, "insurance": 10, "decision": 15, "bonus": 10},
    "special_bets": {"pair": {"suited_pair": 25, "pair": 8}},
    "chips": ["1", "5", "25"],
}


@pytest.fixture(autouse=True)
def _no_par_sheet_behind_the_tests(settings):
    """A new configuration warms its main par sheet (a Celery task on the production stack):
    not here, where no worker would take it before a later test's worker does."""
    settings.TABLEHUB_WARM_PARSHEETS = False


def run(*args: str, stdin: str = "") -> str:
    out = io.StringIO()
    real = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        call_command(*args, stdout=out)
    finally:
        sys.stdin = real
    return out.getvalue()


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIG))
    return str(path)


@pytest.fixture
def jurisdiction(transactional_db):
    return Jurisdiction.objects.create(code="nv", name="Nevada")


def test_create_table_with_its_first_configuration(jurisdiction, config_file):
    out = run("create_table", "Main floor 1", "--jurisdiction", "nv", "--config", config_file,
              "--boxes", "5", "--currency", "EUR")  # fmt: skip
    table = Table.objects.get(pk=int(out))
    assert (table.name, table.boxes, table.currency, table.is_open) == ("Main floor 1", 5, "EUR",
                                                                         False)  # fmt: skip
    config = table.current_config()
    assert config.version == 1 and config.ruleset().decks == 6
    assert config.offered_special_bets() == ["pair"]


def test_a_bad_table_is_refused_in_one_line_and_leaves_nothing(jurisdiction, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**CONFIG, "timers": {"decision": 999}}))
    with pytest.raises(CommandError) as exc:
        run("create_table", "T", "--jurisdiction", "nv", "--config", str(bad))
    assert "timers:" in str(exc.value) and "\n" not in str(exc.value)
    assert not Table.objects.exists()  # the table went with its refused configuration
    with pytest.raises(CommandError, match="no jurisdiction with code 'zz'"):
        run("create_table", "T", "--jurisdiction", "zz", "--config", str(bad))
    with pytest.raises(CommandError, match="cannot read the configuration"):
        run("create_table", "T", "--jurisdiction", "nv", "--config", str(tmp_path / "none"))


def make_table(jurisdiction, config_file) -> Table:
    out = run("create_table", "T1", "--jurisdiction", "nv", "--config", config_file)
    return Table.objects.get(pk=int(out))


def lines(out: str) -> dict[str, str]:
    return dict(line.split("\t") for line in out.splitlines())


@pytest.mark.django_db(transaction=True)
async def test_stations_in_bulk_and_a_reader_key_let_them_in(jurisdiction, config_file):
    table = await database_sync_to_async(make_table)(jurisdiction, config_file)
    command = database_sync_to_async(run)
    first = lines(await command("create_stations", str(table.pk), "--count", "3"))
    assert list(first) == ["s1", "s2", "s3"]
    more = lines(await command("create_stations", str(table.pk), "--count", "2"))
    assert list(more) == ["s4", "s5"]  # numbered on
    credentials = first | more
    assert len(set(credentials.values())) == 5
    stored = await database_sync_to_async(
        lambda: dict(Station.objects.filter(table=table).values_list("name", "credential"))
    )()
    for name, credential in credentials.items():
        assert credential not in stored[name]  # only the hash is kept

    ws = await connect(f"/ws/tables/{table.pk}/station/")
    await ws.send_json_to({"type": "join", "client_id": "j", "station": "s4",
                           "credential": credentials["s4"]})  # fmt: skip
    joined = await ws.receive_json_from()
    assert joined["ok"] and joined["state"]["station"] == "s4", joined
    await ws.disconnect()
    ws = await connect(f"/ws/tables/{table.pk}/station/")
    await ws.send_json_to({"type": "join", "client_id": "k", "station": "s5",
                           "credential": credentials["s4"]})  # fmt: skip
    assert (await ws.receive_json_from())["error"]["code"] == "unauthorized"  # s4's is not s5's
    await ws.disconnect()

    key = (await command("set_reader_key", str(table.pk))).strip()
    assert len(key) >= 40
    shoe = await connect(f"/ws/tables/{table.pk}/shoe/")
    await shoe.send_json_to({"type": "hello", "key": key})
    assert (await shoe.receive_json_from()) == {"type": "hello", "ok": True}
    await shoe.disconnect()
    assert await command("set_reader_key", str(table.pk), "--stdin",
                         stdin="a-key-of-my-own-choosing\n") == ""  # fmt: skip
    shoe = await connect(f"/ws/tables/{table.pk}/shoe/")
    await shoe.send_json_to({"type": "hello", "key": key})  # the old key: refused
    assert (await shoe.receive_json_from())["error"]["code"] == "unauthorized"
    await shoe.disconnect()
    await database_sync_to_async(connections.close_all)()


def test_stations_refused_as_a_whole(jurisdiction, config_file):
    table = make_table(jurisdiction, config_file)
    run("create_stations", str(table.pk), "--names", "bar-1", "bar-2")
    for args, message in [
        (("--names", "bar-3", "bar-2"), "has stations bar-2 already"),
        (("--names", "x", "x"), "a station name is given twice"),
        (("--names", "no spaces"), "is not a station name"),
        (("--count", "0"), "--count must be at least 1"),
    ]:
        with pytest.raises(CommandError, match=message):
            run("create_stations", str(table.pk), *args)
    assert sorted(table.stations.values_list("name", flat=True)) == ["bar-1", "bar-2"]
    with pytest.raises(CommandError, match="no table 999"):
        run("create_stations", "999", "--count", "1")
    with pytest.raises(CommandError, match="at least 16 characters"):
        run("set_reader_key", str(table.pk), "--stdin", stdin="short\n")


# -- the same through the API ---------------------------------------------------------------


def test_the_api_sets_a_table_up_for_a_floor_manager_only(jurisdiction, client):
    from tablehub import roles
    from tests.helpers import make_staff

    client.force_login(make_staff("auditor", roles.AUDITOR))
    body = {"name": "API 1", "jurisdiction": "nv", "boxes": 4, "config": CONFIG}
    refused = client.post("/api/tables/", body, content_type="application/json")
    assert refused.status_code == 403 and not Table.objects.exists()

    client.force_login(make_staff("floor", roles.FLOOR_MANAGER))
    bad = client.post("/api/tables/", body | {"config": {**CONFIG, "timers": {"decision": 999}}},
                      content_type="application/json")  # fmt: skip
    assert bad.status_code == 400 and "timers" in bad.json()["error"]["fields"]
    assert not Table.objects.exists()
    made = client.post("/api/tables/", body, content_type="application/json")
    assert made.status_code == 201, made.content
    table = Table.objects.get(pk=made.json()["id"])
    assert (table.name, table.boxes, table.current_config().version) == ("API 1", 4, 1)

    stations = client.post(f"/api/tables/{table.pk}/stations/", {"count": 3},
                           content_type="application/json")  # fmt: skip
    assert stations.status_code == 201 and stations["Cache-Control"] == "no-store"
    rows = stations.json()
    assert [r["name"] for r in rows] == ["s1", "s2", "s3"]
    for row in rows:
        station = Station.objects.get(pk=row["id"])
        assert station.check_credential(row["credential"])
        assert row["credential"] not in station.credential
    taken = client.post(f"/api/tables/{table.pk}/stations/", {"names": ["s2", "s9"]},
                        content_type="application/json")  # fmt: skip
    assert (
        taken.status_code == 400 and "has stations s2 already" in taken.json()["error"]["message"]
    )
    assert table.stations.count() == 3

    key = client.post(f"/api/tables/{table.pk}/reader-key/", {}, content_type="application/json")
    assert key.status_code == 200 and key["Cache-Control"] == "no-store"
    table.refresh_from_db()
    assert table.check_reader_key(key.json()["reader_key"])
    given = client.post(f"/api/tables/{table.pk}/reader-key/", {"key": "k" * 20},
                        content_type="application/json")  # fmt: skip
    assert given.json() == {"reader_key": None}
    table.refresh_from_db()
    assert table.check_reader_key("k" * 20) and not table.check_reader_key(key.json()["reader_key"])
