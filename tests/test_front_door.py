"""The front door (issue 19, points 9 and 10): ``/`` names every table with its status and
each role's links, the demo's stations with credentials that open them; the demo prints
every table's reader key and station credentials and allows disputes with a window."""

import re

import pytest

from rounds.models import Round
from rounds.writer import open_round
from stations.models import Station
from tablehub.demo import DEMO_DISPUTE_WINDOW_SECONDS
from tablehub.models import Jurisdiction, Table

pytestmark = pytest.mark.django_db


def test_the_front_door_lists_each_table_with_its_status_and_role_links(client, run_command):
    assert run_command("demo_table")[0] == 0
    live, video = Table.objects.get(name="Demo table"), Table.objects.get(name="Video demo table")
    replay = Table.objects.create(name="A replay", jurisdiction=live.jurisdiction, is_replay=True)

    response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Live dealer-assist blackjack" in page
    assert "A replay" not in page and f'data-table="{replay.pk}"' not in page
    for table in (live, video):
        card = page.split(f'data-table="{table.pk}"')[1].split("</li>\n    \n")[0]
        assert table.name in card
        assert "Open, round 1: Betting" in card  # the demo opened each table's round 1
        links = re.findall(rf'href="/tables/{table.pk}/stations/(\w+)/#credential=([\w-]+)"', card)
        assert len(links) == 2
        for name, credential in links:
            assert Station.objects.get(table=table, name=name).check_credential(credential)
        has_tablet = f'href="/croupier/tables/{table.pk}/"' in card
        assert has_tablet == (table.mode == Table.Mode.DEALER)
    for href in ('href="/admin/"', 'href="/api/docs/"', 'href="/api/redoc/"',
                 'href="/api/schema/"', 'href="/croupier/"'):  # fmt: skip
        assert href in page


def test_a_station_whose_demo_credential_was_changed_is_linked_without_it(client, run_command):
    run_command("demo_table")
    table = Table.objects.get(name="Demo table")
    s1 = table.stations.get(name="s1")
    s1.set_credential("a-secret-the-floor-manager-chose")
    s1.save()
    table.is_open = False
    table.save()
    page = client.get("/").content.decode()
    assert f'href="/tables/{table.pk}/stations/s1/"' in page  # its page asks for it
    assert "demo-s1" not in page and f"/tables/{table.pk}/stations/s2/#credential=demo-s2" in page
    assert "Closed, round 1: Betting" in page


def test_the_demo_prints_every_tables_reader_key_and_allows_disputes(run_command):
    code, out, _ = run_command("demo_table", "--base-url", "http://127.0.0.1:9000")
    assert code == 0
    keys = re.findall(r"reader key: (\S+)", out)
    tables = list(Table.objects.order_by("pk"))
    assert len(keys) == len(tables) == 2
    for table, key in zip(tables, keys, strict=True):
        assert table.check_reader_key(key)
    credentials = re.findall(r"station (\w+) \(credential ([\w-]+)\)", out)
    assert [name for name, _ in credentials] == ["s1", "s2", "v1", "v2"]
    assert "http://127.0.0.1:9000/api/docs/" in out
    demo = Jurisdiction.objects.get(code="demo")
    assert demo.disputes_allowed
    assert demo.dispute_window_seconds == DEMO_DISPUTE_WINDOW_SECONDS > 0


def test_a_demo_database_made_with_disputes_off_gets_them_on(run_command):
    Jurisdiction.objects.create(code="demo", name="Demo (no real money)")
    run_command("demo_table")
    assert Jurisdiction.objects.get(code="demo").disputes_allowed


def test_rounds_count_per_table(run_command):
    run_command("demo_table")
    live, video = Table.objects.get(name="Demo table"), Table.objects.get(name="Video demo table")
    Round.objects.update(phase=Round.Phase.VOID)
    opened = [open_round(table) for table in (live, video, live, live, video)]
    assert [(r.table_id, r.number) for r in opened] == [
        (live.pk, 2),
        (video.pk, 2),
        (live.pk, 3),
        (live.pk, 4),
        (video.pk, 3),
    ]
    assert len({r.pk for r in opened}) == 5
