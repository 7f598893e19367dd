"""The croupier's pages: login, logout, the tables and the tablet, for tablet staff only; and a
dealer never reaches the admin."""

import pytest
from django.contrib.auth.models import Group, User

from rounds.engine import RuleSet
from tablehub import roles
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import ensure_role_permissions

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="Table one", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    return table


def user(username, role=None, **extra):
    person = User.objects.create_user(username, password=f"{username}-pw", **extra)
    if role:
        # A transactional test run before this one may have flushed the groups' permissions
        # (a floor manager sees every table by ``view_table``).
        ensure_role_permissions()
        person.groups.add(Group.objects.get_or_create(name=role)[0])
    return person


@pytest.mark.parametrize("path", ["/croupier/", "/croupier/tables/1/"])
def test_logged_out_users_go_to_the_login(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response.url == f"/croupier/login/?next={path}"


def test_a_login_without_a_tablet_role_is_refused(client, table):
    client.force_login(user("guest"))
    for path in ("/croupier/", f"/croupier/tables/{table.pk}/"):
        response = client.get(path)
        assert response.status_code == 403
        assert b"may not use the croupier tablet" in response.content
    client.force_login(user("auditor", roles.AUDITOR))
    assert client.get("/croupier/").status_code == 403


@pytest.mark.parametrize("role", [roles.DEALER, roles.SUPERVISOR, roles.FLOOR_MANAGER])
def test_tablet_staff_see_the_tables_and_the_tablet(client, table, role):
    person = user("staff", role)
    client.force_login(person)
    if role != roles.FLOOR_MANAGER:  # dealers and supervisors work only their own tables
        assert f"/croupier/tables/{table.pk}/".encode() not in client.get("/croupier/").content
        assert client.get(f"/croupier/tables/{table.pk}/").status_code == 403
        table.staff.add(person)
    tables = client.get("/croupier/")
    assert tables.status_code == 200
    assert f'href="/croupier/tables/{table.pk}/"'.encode() in tables.content
    page = client.get(f"/croupier/tables/{table.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    for text in (
        "Open table",
        "Close table",
        "Close bets",
        "Deal card",
        "Burn card",
        "New shoe",
        "Enter card",
        "Void round",
        "Correct card",
        "Resolve dispute",
        'role="timer"',
        'role="alert"',
        f"/ws/tables/{table.pk}/croupier/",
        "croupier/tablet.js",
    ):
        assert text in html, text
    assert client.get(f"/croupier/tables/{table.pk + 9}/").status_code == 404


def test_login_then_logout(client, table):
    user("dealer", roles.DEALER)
    page = client.get("/croupier/login/")
    assert page.status_code == 200 and b'<label for="id_username">' in page.content
    wrong = client.post("/croupier/login/", {"username": "dealer", "password": "nope"})
    assert wrong.status_code == 200 and b'role="alert"' in wrong.content
    response = client.post("/croupier/login/", {"username": "dealer", "password": "dealer-pw"})
    assert response.status_code == 302 and response.url == "/croupier/"
    assert client.get("/croupier/").status_code == 200
    response = client.post("/croupier/logout/")
    assert response.status_code == 302 and response.url == "/croupier/login/"
    assert client.get("/croupier/").status_code == 302


def test_a_dealer_cannot_reach_the_admin_but_works_the_tablet(client, table):
    dealer = user("dealer", roles.DEALER)
    table.staff.add(dealer)
    assert not dealer.is_staff
    refused = client.post("/admin/login/", {"username": "dealer", "password": "dealer-pw"})
    assert refused.status_code == 200  # the admin's login form again, with its error
    assert b"staff account" in refused.content
    client.force_login(dealer)
    response = client.get("/admin/")
    assert response.status_code == 302 and response.url.startswith("/admin/login/")
    assert client.get("/admin/tablehub/table/").status_code == 302
    assert client.get(f"/croupier/tables/{table.pk}/").status_code == 200
