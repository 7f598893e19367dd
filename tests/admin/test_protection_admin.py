"""Player protection in the admin: the jurisdiction's maxima are data (off by default,
set in its change form) and the protection log is listed, read only."""

from decimal import Decimal

import pytest

from stations import seats
from stations.models import TableSeat
from tablehub.models import Play
from tests.admin.test_admin_pages import jurisdiction_form

pytestmark = pytest.mark.django_db


def test_the_jurisdictions_protection_maxima_are_off_by_default_and_set_in_the_admin(login, table):
    wa = table.jurisdiction
    assert wa.max_stake_per_round is None and wa.max_session_minutes is None
    url = f"/admin/tablehub/jurisdiction/{wa.pk}/change/"
    client = login("superuser")
    assert "Player protection" in client.get(url).content.decode()
    data = jurisdiction_form(wa, max_stake_per_round="250", max_session_minutes="120")
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    wa.refresh_from_db()
    assert wa.max_stake_per_round == Decimal("250.00") and wa.max_session_minutes == 120
    assert wa.history.first().max_session_minutes == 120  # versioned with the rest


def test_the_protection_log_is_listed_read_only(login, table):
    client = login("superuser")
    page = client.get("/admin/stations/protectionevent/")
    assert page.status_code == 200
    html = page.content.decode()
    # the table's two stations cashed in: their sessions started
    assert (
        html.count('field-kind">Session Started') == 2 and "WA 1/s1" in html and "WA 1/s2" in html
    )
    assert client.get("/admin/stations/protectionevent/add/").status_code == 403


@pytest.mark.parametrize("role", ["floor_manager", "auditor"])
def test_floor_managers_and_auditors_read_the_protection_and_integrity_logs(login, table, role):
    """Issue 20, reports: the floor manager lists the protection log in the admin (and the
    auditor reads it, with the card alerts and the program checks), changes none of them."""
    client = login(role)
    page = client.get("/admin/stations/protectionevent/")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('field-kind">Session Started') == 2 and "WA 1/s1" in html
    for log in ("croupier/cardalert", "tablehub/installcheck"):
        assert client.get(f"/admin/{log}/").status_code == 200
    for refused in ("/admin/stations/protectionevent/add/", "/admin/croupier/cardalert/add/"):
        assert client.get(refused).status_code == 403


def test_dealers_and_supervisors_read_no_log_in_the_admin(login, table):
    for role in ("dealer", "supervisor"):
        page = login(role).get("/admin/stations/protectionevent/")
        assert page.status_code == 302 and "/admin/login/" in page.url  # not staff


def test_a_floor_manager_frees_a_seat_and_an_auditor_only_reads_the_seats(login, table):
    table.configs.update(play=Play.SEAT)
    s1 = table.stations.get(name="s1")
    seats.take_seat(s1, 2)
    seat = TableSeat.objects.get()
    auditor = login("auditor")
    page = auditor.get("/admin/stations/tableseat/")
    assert page.status_code == 200 and "free_seats" not in page.content.decode()
    action = {"action": "free_seats", "_selected_action": [seat.pk]}
    auditor.post("/admin/stations/tableseat/", action)
    assert TableSeat.objects.filter(pk=seat.pk).exists()  # not the auditor's to free
    manager = login("floor_manager")
    assert "free_seats" in manager.get("/admin/stations/tableseat/").content.decode()
    response = manager.post("/admin/stations/tableseat/", action)
    assert response.status_code == 302
    assert not TableSeat.objects.exists()
