"""Who may call what: every role against every endpoint, with the status codes and the
error body of a refusal."""

import pytest
from rest_framework.authtoken.models import Token

from tests.helpers import play

from .conftest import PASSWORD, wa_config

pytestmark = pytest.mark.django_db
READERS = ("superuser", "floor_manager", "auditor")
TABLET = ("supervisor", "dealer")


@pytest.fixture
def world(table, other_table, users):
    table.staff.add(users["dealer"], users["supervisor"])
    s1 = table.stations.get(name="s1")
    round = play(table, [(s1, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    return {"t1": table.pk, "t2": other_table.pk, "round": round.pk, "s1": s1.pk}


READ_URLS = [
    "/api/tables/{t1}/configs/",
    "/api/tables/{t1}/configs/1/",
    "/api/tables/{t1}/rounds/",
    "/api/tables/{t1}/parsheets/",
    "/api/tables/{t1}/report/?start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z",
    "/api/rounds/{round}/",
    "/api/stations/",
    "/api/stations/{s1}/rounds/",
    "/api/stations/{s1}/ledger/",
    "/api/stations/{s1}/meters/",
    "/api/tables/{t1}/meters/",
    "/api/jurisdictions/",
]


@pytest.mark.parametrize("url", READ_URLS)
def test_staff_who_read_get_200_and_tablet_staff_get_403(api, users, world, url):
    url = url.format(**world)
    for role in READERS:
        assert api(users[role], "get", url).status_code == 200, (role, url)
    for role in TABLET:
        response = api(users[role], "get", url)
        assert response.status_code == 403, (role, url)
        error = response.json()["error"]
        assert error["code"] == "permission_denied"
        assert error["message"].startswith("your role may not do this: it needs ")
    assert api(None, "get", url).status_code == 401


def test_dealers_see_only_the_status_of_their_own_table(api, users, world):
    for role in READERS + TABLET:
        response = api(users[role], "get", "/api/tables/{t1}/status/".format(**world))
        assert response.status_code == 200, role
        status = response.json()
        assert (status["name"], status["config_version"], status["stations"]) == ("WA 1", 1, 2)
        assert status["round"]["phase"] == "settled"
    for role in TABLET:
        other = api(users[role], "get", "/api/tables/{t2}/status/".format(**world))
        assert other.status_code == 403
        assert other.json() == {
            "error": {
                "code": "permission_denied",
                "message": "you may see only the tables you work",
            }
        }
        names = [t["name"] for t in api(users[role], "get", "/api/tables/").json()]
        assert names == ["WA 1"]
    names = [t["name"] for t in api(users["auditor"], "get", "/api/tables/").json()]
    assert names == ["WA 1", "WA 2"]
    assert api(None, "get", "/api/tables/").status_code == 401


def test_only_floor_managers_and_superusers_add_a_configuration(api, users, world):
    url = "/api/tables/{t1}/configs/".format(**world)
    body = wa_config(timers={"betting": 20, "decision": 12})
    for role in ("auditor", "supervisor", "dealer"):
        assert api(users[role], "post", url, body).status_code == 403, role
    created = api(users["floor_manager"], "post", url, body)
    assert created.status_code == 201
    assert (created.json()["version"], created.json()["created_by"]) == (2, "fm")
    again = api(users["superuser"], "post", url, body)
    assert (again.status_code, again.json()["version"]) == (200, 2)  # nothing changed


def test_a_refused_configuration_says_why(api, users, world):
    url = "/api/tables/{t1}/configs/".format(**world)
    body = wa_config(special_bets={"bust": {"bust_3": 1}}, timers={"decision": 99})
    response = api(users["floor_manager"], "post", url, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["fields"] == {
        "timers": [
            "decision 99 s is over Washington State tribal casinos (Interblock ETG "
            "approval)'s longest timer of 25 s"
        ],
        "special_bets": [
            "bust is not approved in Washington State tribal casinos (Interblock ETG approval)"
        ],
    }
    assert error["message"] == "timers: " + error["fields"]["timers"][0]
    missing = api(users["floor_manager"], "post", url, {"limits": {}})
    assert missing.status_code == 400
    assert missing.json()["error"]["fields"] == {"rules": ["This field is required."]}


def test_token_and_basic_auth(client, users, world):
    response = client.post("/api/token/", {"username": "aud", "password": PASSWORD})
    assert response.status_code == 200
    token = response.json()["token"]
    assert Token.objects.get(user=users["auditor"]).key == token
    ok = client.get("/api/jurisdictions/", HTTP_AUTHORIZATION=f"Token {token}")
    assert ok.status_code == 200 and len(ok.json()) == 2
    bad = client.get("/api/jurisdictions/", HTTP_AUTHORIZATION="Token nope")
    assert bad.status_code == 401
    assert bad.json()["error"] == {"code": "authentication_failed", "message": "Invalid token."}
    import base64

    basic = base64.b64encode(f"fm:{PASSWORD}".encode()).decode()
    assert client.get("/api/tables/", HTTP_AUTHORIZATION=f"Basic {basic}").status_code == 200
    wrong = client.post("/api/token/", {"username": "aud", "password": "nope"})
    assert wrong.status_code == 400
    assert wrong.json()["error"]["message"] == "Unable to log in with provided credentials."


def test_unknown_objects_are_404_with_a_message(api, users, world):
    response = api(users["auditor"], "get", "/api/rounds/999999/")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "no round 999999"}}
    huge = api(users["auditor"], "get", "/api/rounds/99999999999999999999999/")
    assert huge.status_code == 404
    version = api(users["auditor"], "get", "/api/tables/{t1}/configs/7/".format(**world))
    assert (
        version.json()["error"]["message"] == f"table {world['t1']} has no configuration version 7"
    )
