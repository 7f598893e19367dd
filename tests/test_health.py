"""The health page, the admin login page, the API schema and the ASGI app."""

import os

import pytest
from django.db import OperationalError, connection
from django.test import Client

pytestmark = pytest.mark.django_db


def expected_vendor() -> str:
    """The database vendor DATABASE_URL asks for ("sqlite" when it is unset)."""
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://", "pgsql://", "postgis://")):
        return "postgresql"
    if not url or url.startswith("sqlite:"):
        return "sqlite"
    return connection.vendor


def test_health_reports_database_and_channel_layer(client: Client) -> None:
    response = client.get("/health/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == expected_vendor()
    layer = "RedisChannelLayer" if os.environ.get("REDIS_URL") else "TableChannelLayer"
    assert body["channel_layer"] == layer


def test_health_answers_503_when_the_database_fails(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_cursor(*args: object, **kwargs: object) -> None:
        raise OperationalError("database is down")

    monkeypatch.setattr(connection, "cursor", broken_cursor)
    response = client.get("/health/")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert "OperationalError" in body["error"]


def test_health_is_get_only(client: Client) -> None:
    assert client.post("/health/").status_code == 405


def test_admin_login_page_answers(client: Client) -> None:
    response = client.get("/admin/login/")
    assert response.status_code == 200
    assert b'name="username"' in response.content


def test_api_schema_is_served(client: Client) -> None:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "TableHub API"


def test_asgi_application_routes_http_and_websocket() -> None:
    from tablehub.asgi import application

    assert set(application.application_mapping) == {"http", "websocket"}
