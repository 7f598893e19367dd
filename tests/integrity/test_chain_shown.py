"""Where the chains are shown: game recall (API and admin) says whether a round's links
verify and names the first that does not; the table report publishes the chains' heads."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from payouts.models import LedgerEntry
from rounds.models import ChainHead, RoundEvent
from stations.models import Station
from tests.admin.conftest import *  # noqa: F403
from tests.admin.conftest import PASSWORD, default_pays, quick_settings, wa_config  # noqa: F401
from tests.helpers import play


@pytest.fixture
def played(table):
    s1 = Station.objects.get(table=table, name="s1")
    # Box 1: T T against 9 up, 7 in the hole, 2 drawn: the station stands and wins.
    return play(table, [(s1, 1, "main", "10")], "TS 9C TD 7D 2H", [("s1", "stand")])


def test_recall_in_the_api_says_the_links_verify_and_names_a_break(api, users, played):
    url = f"/api/rounds/{played.pk}/"
    integrity = api(users["auditor"], "get", url).json()["integrity"]
    assert integrity == {"verified": True, "events": 7, "ledger_entries": 4, "break": None}
    entry = LedgerEntry.objects.filter(round=played, station__isnull=False, kind="return").get()
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {LedgerEntry._meta.db_table} SET amount = 30 WHERE id = %s", [entry.pk]
        )
    integrity = api(users["auditor"], "get", url).json()["integrity"]
    assert integrity["verified"] is False
    assert integrity["break"] == {
        "chain": "ledger",
        "kind": "changed",
        "position": entry.chain_pos,
        "row": f"ledger entry {entry.pk} ({entry.key})",
        "detail": "its content or link is not what was written",
    }


def test_recall_in_the_admin_says_whether_the_links_verify(login, played):
    page = login("floor_manager").get(f"/admin/rounds/round/{played.pk}/change/")
    assert "The links of its 7 events and 4 ledger entries verify." in page.content.decode()
    event = RoundEvent.objects.get(round=played, seq=3)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {RoundEvent._meta.db_table} WHERE id = %s", [event.pk])
    html = login("floor_manager").get(f"/admin/rounds/round/{played.pk}/change/").content.decode()
    assert (
        f"The links do not verify: missing at position {event.chain_pos} of the events chain"
    ) in html


def test_the_table_report_publishes_the_chain_heads(api, users, table, played):
    start, end = timezone.now() - timedelta(hours=24), timezone.now() + timedelta(seconds=1)
    url = f"/api/tables/{table.pk}/report/?start={start.isoformat()}&end={end.isoformat()}"
    report = api(users["auditor"], "get", url.replace("+", "%2B")).json()
    heads = {
        h.chain: {"position": h.position, "link": h.link}
        for h in ChainHead.objects.filter(table=table)
    }
    assert report["chain_heads"] == heads
    assert heads["ledger"]["position"] == 2 * 2 + 4  # two cash-ins, a stake, a return
    # A report of a range that ended before the table's first row: the chains' start.
    early = start - timedelta(days=1)
    url = f"/api/tables/{table.pk}/report/?start={early.isoformat()}&end={start.isoformat()}"
    report = api(users["auditor"], "get", url.replace("+", "%2B")).json()
    assert report["chain_heads"]["events"] == {"position": 0, "link": "0" * 64}
