"""Fixtures of the floor-manager tests (admin, API, reports): the seed jurisdictions, a
Washington table, staff users, and a JSON client for the API. tests/api and tests/reports
use them from here."""

import json

import pytest
from django.core.management import call_command

from payouts.specials.defaults import default_paytable_rows
from stations.models import Station
from stations.services import cash_in
from tablehub import roles
from tablehub.configuration import save_version
from tablehub.models import Jurisdiction, Table
from tests.helpers import make_staff

PASSWORD = "pw-" + "x" * 12


@pytest.fixture(autouse=True)
def quick_settings(settings):
    settings.TABLEHUB_WARM_PARSHEETS = False  # no par sheet computed behind the tests' back
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def jurisdictions(db):
    call_command("loaddata", "jurisdictions", verbosity=0)
    return {j.code: j for j in Jurisdiction.objects.all()}


def default_pays(code):
    return default_paytable_rows()[code]["pays"]


def wa_config(**changes):
    data = {
        "rules": {"decks": 8},
        "limits": {"main": ["1", "100"], "special": ["1", "25"]},
        "timers": {"betting": 15, "decision": 15},
        "special_bets": {"21+3": default_pays("21+3"), "pair": default_pays("pair")},
    }
    data.update(changes)
    return data


@pytest.fixture
def table(jurisdictions):
    table = Table.objects.create(name="WA 1", jurisdiction=jurisdictions["wa-tribal"])
    save_version(table, wa_config())
    for name in ("s1", "s2"):
        cash_in(Station.objects.create(table=table, name=name), "100", key="start")
    return table


@pytest.fixture
def users(db):
    return {
        "superuser": make_staff("root", None, PASSWORD),
        "floor_manager": make_staff("fm", roles.FLOOR_MANAGER, PASSWORD),
        "auditor": make_staff("aud", roles.AUDITOR, PASSWORD),
        "supervisor": make_staff("sup", roles.SUPERVISOR, PASSWORD),
        "dealer": make_staff("dealer", roles.DEALER, PASSWORD),
    }


@pytest.fixture
def login(client, users):
    def as_(role):
        client.force_login(users[role])
        return client

    return as_


@pytest.fixture
def other_table(jurisdictions):
    table = Table.objects.create(name="WA 2", jurisdiction=jurisdictions["wa-tribal"])
    save_version(table, wa_config())
    return table


@pytest.fixture
def api(client):
    """GET/POST JSON as a role: api(role, method, url, body=None) -> response."""

    def call(user, method, url, body=None):
        client.logout()
        if user is not None:
            client.force_login(user)
        if method == "get":
            return client.get(url)
        return client.generic(
            method.upper(), url, data=json.dumps(body), content_type="application/json"
        )

    return call
