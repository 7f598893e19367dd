"""Failed credential attempts are limited per credential and per address (issue 17,
finding 10; tablehub/attempts.py): station joins and reader hellos over real websockets,
the reader's HTTP input and logins. Small limits here: 3 per credential in 4 s, 5 per address.

The credential's window is a few seconds, not one: on a loaded CI machine four websocket
joins can take more than a second, and the lock must still be on when the test looks."""

import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from tablehub.asgi import application
from tablehub.models import Jurisdiction
from tests.fuzz.support import ORIGIN, make_table, next_reply
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async
CREDENTIAL_SECONDS = 4


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.TABLEHUB_ATTEMPT_LIMITS = {
        "per_credential": 3,
        "credential_seconds": CREDENTIAL_SECONDS,
        "per_address": 5,
        "address_seconds": 60,
    }
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def tables(transactional_db):
    jurisdiction = Jurisdiction.objects.create(code="wa")
    secrets = {"s1": "s1-secret", "s2": "s2-secret"}
    return (
        make_table("t1", "reader-secret", secrets, jurisdiction),
        make_table("t2", "reader-2", {}, jurisdiction),
    )


async def socket(path: str, address: str) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(application, path, headers=ORIGIN)
    ws.scope["client"] = (address, 40000)
    assert (await ws.connect())[0]
    return ws


async def join(table, name: str, credential: str, address: str) -> str:
    """The outcome of one join: "ok" or the error code."""
    ws = await socket(f"/ws/tables/{table.pk}/station/", address)
    await ws.send_json_to(
        {"type": "join", "client_id": "j", "station": name, "credential": credential}
    )
    reply = await next_reply(ws)
    await ws.disconnect()
    return "ok" if reply["ok"] else reply["error"]["code"]


async def hello(table, key: str, address: str) -> str:
    ws = await socket(f"/ws/tables/{table.pk}/shoe/", address)
    await ws.send_json_to({"type": "hello", "key": key})
    reply = await ws.receive_json_from(timeout=5)
    await ws.disconnect()
    return "ok" if reply["ok"] else reply["error"]["code"]


async def test_a_station_credential_is_locked_after_three_failures_until_its_window_ends(
    tables,
):
    t1, _ = tables
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):  # three guessers, one failure each
        assert await join(t1, "s1", "guess", address) == "unauthorized"
        if address == "10.0.0.1":
            window_started_by = time.monotonic()  # the first failure opened the window
    # Now even the right credential waits: the guesses must not go on from anywhere.
    assert await join(t1, "s1", "s1-secret", "10.0.0.4") == "too_many_attempts"
    assert await join(t1, "s2", "s2-secret", "10.0.0.4") == "ok"  # another station is free
    time.sleep(max(0.0, window_started_by + CREDENTIAL_SECONDS + 0.2 - time.monotonic()))
    # The credential's window has ended.
    assert await join(t1, "s1", "s1-secret", "10.0.0.4") == "ok"


async def test_an_address_is_locked_after_five_failures_of_any_credential(tables):
    t1, t2 = tables
    for name in ("a", "b", "c", "d"):
        assert await join(t1, name, "guess", "10.0.0.9") == "unauthorized"
    assert await hello(t2, "guess", "10.0.0.9") == "unauthorized"
    assert await join(t1, "s2", "s2-secret", "10.0.0.9") == "too_many_attempts"
    assert await hello(t1, "reader-secret", "10.0.0.9") == "too_many_attempts"
    assert await join(t1, "s2", "s2-secret", "10.0.0.10") == "ok"  # another address


async def test_a_reader_key_is_locked_after_three_failures(tables):
    t1, t2 = tables
    for address in ("10.0.1.1", "10.0.1.2", "10.0.1.3"):
        assert await hello(t1, "guess", address) == "unauthorized"
    assert await hello(t1, "reader-secret", "10.0.1.4") == "too_many_attempts"
    assert await hello(t2, "reader-2", "10.0.1.4") == "ok"


def post_card(client, table, key: str, address: str):
    return client.post(
        f"/api/tables/{table.pk}/shoe/cards/",
        {"seq": 1, "card": "9S"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Reader {key}",
        REMOTE_ADDR=address,
    )


def test_the_readers_http_input_is_limited_per_key(client, tables):
    t1, t2 = tables
    for address in ("10.0.2.1", "10.0.2.2", "10.0.2.3"):
        assert post_card(client, t1, "guess", address).status_code == 401
    locked = post_card(client, t1, "reader-secret", "10.0.2.4")
    assert locked.status_code == 429
    assert locked.json()["error"]["code"] == "too_many_attempts"
    assert post_card(client, t2, "reader-2", "10.0.2.4").status_code != 429  # another key


def test_the_readers_http_input_is_limited_per_address(client, tables, settings):
    settings.TABLEHUB_ATTEMPT_LIMITS |= {"per_credential": 100}
    t1, t2 = tables
    for _ in range(5):
        assert post_card(client, t1, "guess", "10.0.2.1").status_code == 401
    assert post_card(client, t2, "reader-2", "10.0.2.1").status_code == 429
    assert post_card(client, t2, "reader-2", "10.0.2.5").status_code != 429  # another one


def test_failed_logins_of_any_username_lock_their_address(client, tables):
    for n in range(5):
        User.objects.create_user(f"u{n}", password="right-pw")
    for n in range(5):  # one failure each: no username is locked by django-axes
        failed = client.post(
            "/api/token/", {"username": f"u{n}", "password": "wrong"}, REMOTE_ADDR="10.0.3.1"
        )
        assert failed.status_code == 400
    locked = client.post(
        "/api/token/", {"username": "u0", "password": "right-pw"}, REMOTE_ADDR="10.0.3.1"
    )
    assert locked.status_code == 429
    other = client.post(
        "/api/token/", {"username": "u0", "password": "right-pw"}, REMOTE_ADDR="10.0.3.2"
    )
    assert other.status_code == 200 and other.json()["token"]
