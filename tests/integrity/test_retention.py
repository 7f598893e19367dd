"""Retention: no admin page and no code path deletes a RoundEvent or a ledger entry (nor the
round or station that holds them); each way is tried here, and each row is still there."""

import pytest
from django.db.models import ProtectedError

from payouts.models import LedgerEntry
from rounds.models import ChainHead, Kept, Round, RoundEvent
from stations.models import Station
from tablehub.models import Table
from tests.admin.conftest import *  # noqa: F403
from tests.admin.conftest import PASSWORD, default_pays, quick_settings, wa_config  # noqa: F401
from tests.helpers import play


@pytest.fixture
def played(table):
    s1 = Station.objects.get(table=table, name="s1")
    return play(table, [(s1, 1, "main", "10")], "TS 9C TD 7D 2H", [("s1", "stand")])


def counts() -> tuple[int, int]:
    return RoundEvent.objects.count(), LedgerEntry.objects.count()


@pytest.mark.parametrize("role", ["superuser", "floor_manager", "auditor"])
def test_no_admin_page_deletes_an_event_an_entry_or_their_round(login, played, role):
    before = counts()
    client = login(role)
    event = RoundEvent.objects.filter(round=played).first()
    entry = LedgerEntry.objects.filter(round=played).first()
    for url, pk in (
        ("/admin/rounds/roundevent/", event.pk),
        ("/admin/payouts/ledgerentry/", entry.pk),
        ("/admin/rounds/round/", played.pk),
    ):
        assert client.get(f"{url}{pk}/delete/").status_code == 403
        assert client.post(f"{url}{pk}/delete/", {"post": "yes"}).status_code == 403
        # The list's bulk action is not offered, and posting it deletes nothing.
        listing = client.get(url)
        assert listing.status_code == 200 and "delete_selected" not in listing.content.decode()
        client.post(url, {"action": "delete_selected", "_selected_action": [pk], "post": "yes"})
    assert counts() == before


def test_deleting_the_table_or_station_that_holds_them_is_refused(login, played):
    before = counts()
    client = login("superuser")
    table, station = played.table, Station.objects.get(name="s1")
    client.post(f"/admin/tablehub/table/{table.pk}/delete/", {"post": "yes"})
    client.post(f"/admin/stations/station/{station.pk}/delete/", {"post": "yes"})
    assert counts() == before
    assert Table.objects.filter(pk=table.pk).exists() and Station.objects.filter(pk=station.pk)
    with pytest.raises(ProtectedError):
        played.delete()
    with pytest.raises(ProtectedError):
        table.delete()
    with pytest.raises(ProtectedError):
        Round.objects.filter(pk=played.pk).delete()
    assert counts() == before


def test_no_code_path_deletes_an_event_or_an_entry(played):
    before = counts()
    with pytest.raises(Kept, match="RoundEvent rows are never deleted"):
        RoundEvent.objects.filter(round=played).delete()
    with pytest.raises(Kept, match="LedgerEntry rows are never deleted"):
        LedgerEntry.objects.all().delete()
    with pytest.raises(Kept, match=r"RoundEvent \d+ is never deleted"):
        RoundEvent.objects.first().delete()
    with pytest.raises(Kept, match=r"LedgerEntry \d+ is never deleted"):
        LedgerEntry.objects.first().delete()
    with pytest.raises(Kept):
        played.events.all().delete()
    with pytest.raises(ProtectedError):
        ChainHead.objects.filter(table=played.table).first().table.delete()
    assert counts() == before
