"""Login throttling (django-axes) on every login: the admin, authenticate() with and without
a request, and a websocket's login built from its ASGI scope."""

import pytest
from django.contrib.auth import authenticate
from django.test import RequestFactory

from tablehub.auth import authenticate_from_scope

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def fail_admin_login(client, username, times, address="127.0.0.1"):
    for _ in range(times):
        response = client.post(
            "/admin/login/",
            {"username": username, "password": "wrong"},
            REMOTE_ADDR=address,
        )
        assert response.status_code == 200  # the form again, with its error


def test_five_failed_admin_logins_lock_the_username_from_that_address(client, users):
    fail_admin_login(client, "fm", 4)
    fifth = client.post("/admin/login/", {"username": "fm", "password": "wrong"})
    assert fifth.status_code == 429 and "locked" in fifth.content.decode().lower()
    response = client.post(
        "/admin/login/", {"username": "fm", "password": PASSWORD}, REMOTE_ADDR="127.0.0.1"
    )
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    other = client.post(
        "/admin/login/", {"username": "fm", "password": PASSWORD}, REMOTE_ADDR="10.0.0.9"
    )
    assert other.status_code == 302  # another address is not locked out by these failures


def test_four_failures_then_the_right_password_logs_in(client, users):
    fail_admin_login(client, "aud", 4)
    response = client.post("/admin/login/", {"username": "aud", "password": PASSWORD})
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(
        users["auditor"].pk
    )


def test_authenticate_with_a_request_counts_failures(users):
    request = RequestFactory().post("/croupier/login/", REMOTE_ADDR="10.1.1.1")
    for _ in range(5):
        assert authenticate(request, username="sup", password="wrong") is None
    request = RequestFactory().post("/croupier/login/", REMOTE_ADDR="10.1.1.1")
    assert authenticate(request, username="sup", password=PASSWORD) is None  # locked


def test_authenticate_without_a_request_works_and_respects_a_lockout(users):
    assert authenticate(username="sup", password=PASSWORD) == users["supervisor"]
    assert authenticate(username="sup", password="wrong") is None
    for _ in range(5):
        request = RequestFactory().post("/croupier/login/", REMOTE_ADDR="10.1.1.2")
        authenticate(request, username="sup", password="wrong")
    assert authenticate(username="sup", password=PASSWORD) is None  # locked from somewhere


def test_a_websocket_login_from_its_scope_is_throttled(users):
    scope = {
        "type": "websocket",
        "path": "/ws/croupier/1/",
        "client": ("10.2.2.2", 5123),
        "headers": [(b"user-agent", b"tablet")],
    }
    assert authenticate_from_scope(scope, "sup", PASSWORD) == users["supervisor"]
    for _ in range(5):
        assert authenticate_from_scope(scope, "sup", "wrong") is None
    assert authenticate_from_scope(scope, "sup", PASSWORD) is None
    other = dict(scope, client=("10.2.2.3", 5123))
    assert authenticate_from_scope(other, "sup", PASSWORD) == users["supervisor"]


def test_a_floor_manager_unlocks_a_login_and_an_auditor_sees_the_attempts(client, users):
    from axes.models import AccessAttempt

    fail_admin_login(client, "sup", 4)
    client.post("/admin/login/", {"username": "sup", "password": "wrong"})
    attempt = AccessAttempt.objects.get(username="sup")
    client.force_login(users["auditor"])
    assert client.get("/admin/axes/accessattempt/").status_code == 200
    assert (
        client.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    client.force_login(users["floor_manager"])
    response = client.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not AccessAttempt.objects.exists()
    request = RequestFactory().post("/croupier/login/", REMOTE_ADDR="127.0.0.1")
    assert authenticate(request, username="sup", password=PASSWORD) == users["supervisor"]


def test_a_locked_token_request_or_basic_auth_answers_429(client, users):
    """The API's logins lock like the admin's and answer 429 as documented (they answered
    400 and 401: the lockout was marked on DRF's request, not on Django's)."""
    import base64

    for _ in range(4):
        wrong = client.post("/api/token/", {"username": "aud", "password": "wrong"})
        assert wrong.status_code == 400
    assert client.post("/api/token/", {"username": "aud", "password": "wrong"}).status_code == 429
    right = client.post("/api/token/", {"username": "aud", "password": PASSWORD})
    assert right.status_code == 429 and "token" not in right.content.decode()
    basic = base64.b64encode(f"aud:{PASSWORD}".encode()).decode()
    locked = client.get("/api/tables/", HTTP_AUTHORIZATION=f"Basic {basic}")
    assert locked.status_code == 429
    wrong_basic = base64.b64encode(b"fm:wrong").decode()
    for _ in range(4):
        response = client.get("/api/tables/", HTTP_AUTHORIZATION=f"Basic {wrong_basic}")
        assert response.status_code == 401
    response = client.get("/api/tables/", HTTP_AUTHORIZATION=f"Basic {wrong_basic}")
    assert response.status_code == 429
