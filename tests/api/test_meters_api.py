"""The meters in the API and the admin: to the cent, read by floor managers and auditors,
refused to the tablet's staff, changed by nobody."""

import pytest

from payouts.models import StationMeter
from tests.helpers import play

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(table, users):
    s1 = table.stations.get(name="s1")
    # Box 1: T 9 (19) against the dealer's 9 8 (17): 12.35 staked, 24.70 returned.
    play(table, [(s1, 1, "main", "12.35")], "TS 9C 9D 8H", [("s1", "stand")])
    return s1


def test_a_tables_and_its_stations_meters_to_the_cent(api, users, table, played):
    response = api(users["auditor"], "get", f"/api/tables/{table.pk}/meters/")
    assert response.status_code == 200
    body = response.json()
    s1 = next(s for s in body["stations"] if s["name"] == "s1")
    assert {k: s1[k] for k in ("total_wagered", "total_won", "games_played", "games_won")} == {
        "total_wagered": "12.35", "total_won": "24.70", "games_played": 1, "games_won": 1,
    }  # fmt: skip
    assert (s1["cash_in"], body["cash_in"]) == ("100.00", "200.00")  # s1 and s2 cashed in
    assert (body["total_wagered"], body["total_won"], body["tips"]) == ("12.35", "24.70", "0.00")
    one = api(users["floor_manager"], "get", f"/api/stations/{played.pk}/meters/").json()
    assert one == s1


def test_the_admin_lists_the_meters_and_changes_nothing(login, played):
    for role in ("floor_manager", "auditor"):
        client = login(role)
        page = client.get("/admin/payouts/stationmeter/")
        assert page.status_code == 200
        assert "24.70" in page.content.decode() and "12.35" in page.content.decode()
        assert client.get("/admin/payouts/tablemeter/").status_code == 200
        url = f"/admin/payouts/stationmeter/{played.pk}/change/"
        shown = client.get(url)  # read only: the meters, and no save button
        assert shown.status_code == 200 and "24.70" in shown.content.decode()
        assert 'name="_save"' not in shown.content.decode()
        assert client.post(url, {"total_won": "0"}).status_code == 403
        assert client.post(f"/admin/payouts/stationmeter/{played.pk}/delete/").status_code == 403
    assert StationMeter.objects.get(pk=played.pk).total_won_cents == 2470
