"""The README's run command sets up the demo tables: what it prints works, and a second run
changes nothing."""

import re

import pytest
from django.contrib.auth import authenticate

from rounds.models import Round
from stations.models import Station
from tablehub import roles
from tablehub.models import Table

pytestmark = pytest.mark.django_db


def test_demo_tables_are_open_with_stations_staff_and_a_betting_round(run_command):
    code, out, _ = run_command("demo_table", "--base-url", "http://127.0.0.1:9000")
    assert code == 0
    live, video = Table.objects.get(name="Demo table"), Table.objects.get(name="Video demo table")
    assert (live.mode, video.mode) == (Table.Mode.DEALER, Table.Mode.VIDEO)
    for table in (live, video):
        assert table.is_open
        assert table.rounds.get().phase == Round.Phase.BETTING
    # Every printed station link carries a credential that really opens that station.
    links = re.findall(r"/tables/(\d+)/stations/(\w+)/#credential=([\w-]+)", out)
    assert len(links) == 4
    for table_id, name, credential in links:
        assert Station.objects.get(table_id=table_id, name=name).check_credential(credential)
    assert f"http://127.0.0.1:9000/croupier/tables/{live.pk}/" in out
    dealer = authenticate(username="dealer", password="dealer")
    assert roles.has_role(dealer, (roles.DEALER,)) and not dealer.is_staff
    assert roles.has_role(
        authenticate(username="supervisor", password="supervisor"), roles.APPROVER_ROLES
    )

    # Both tables and their stations are in the demo stadium: the lobby shows both.
    assert live.stadium is not None and video.stadium == live.stadium
    assert set(Station.objects.filter(stadium=live.stadium).values_list("name", flat=True)) == {
        "s1",
        "s2",
        "v1",
        "v2",
    }

    assert run_command("demo_table")[0] == 0  # again: the same tables, no second round
    assert Table.objects.count() == 2 and Round.objects.count() == 2


def test_a_demo_station_that_moved_stays_at_its_new_table(run_command):
    """A station that moved within the demo stadium is printed at its table, and a second run
    makes no second station of its name."""
    assert run_command("demo_table")[0] == 0
    video = Table.objects.get(name="Video demo table")
    Station.objects.filter(name="s1").update(table=video)
    code, out, _ = run_command("demo_table")
    assert code == 0
    assert Station.objects.filter(name="s1").count() == 1
    assert f"/tables/{video.pk}/stations/s1/#credential=demo-s1" in out
