"""A socket's session is checked on every message and closed when it ends (issue 17,
finding 7 and requirement 3; tablehub/session_guard.py).

Over the real ASGI app and channel layer: logout, deactivation, the loss of the role or of
the table, a station's credential and the reader key changed each close an idle socket
within a second; the same changes made behind the signals' back (a queryset update) are
caught by the next message, which is refused with ``unauthorized`` and changes nothing.
"""

import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.contrib.sessions.models import Session
from django.test import Client

from rounds import writer
from rounds.models import Round
from stations.models import BetSlip, Station
from tablehub import roles
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Table
from tablehub.tokens import hash_token
from tests.fuzz.support import ORIGIN, join, make_table, next_reply
from tests.helpers import (
    consumers_connection_closed,  # noqa: F401 (autouse, see there)
    ensure_role_permissions,
)

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_user(username: str, role: str | None, table: Table | None = None) -> User:
    user = User.objects.create_user(username, password=f"{username}-pw")
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    if table is not None:
        table.staff.add(user)
    return user


@pytest.fixture
def table(transactional_db, _fast_passwords):
    table = make_table(
        "t1", "reader-secret", {"s1": "s1-secret"}, Jurisdiction.objects.create(code="wa")
    )
    make_user("dealer", roles.DEALER, table)
    return table


def logged_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=f"{username}-pw")
    return client


async def tablet(table: Table, client: Client) -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    ws = WebsocketCommunicator(
        application, f"/ws/tables/{table.pk}/croupier/", headers=ORIGIN + [(b"cookie", cookie)]
    )
    connected, _ = await ws.connect()
    assert connected
    first = await ws.receive_json_from(timeout=5)
    assert first["type"] == "state", first
    return ws


async def reader(table: Table) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/shoe/", headers=ORIGIN)
    connected, _ = await ws.connect()
    assert connected
    await ws.send_json_to({"type": "hello", "key": "reader-secret"})
    assert await ws.receive_json_from(timeout=5) == {"type": "hello", "ok": True}
    return ws


async def closed_within(ws: WebsocketCommunicator, seconds: float) -> int:
    """The close code of a socket that closes within ``seconds`` (frames before it skipped)."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "the socket did not close in time"
        output = await ws.receive_output(timeout=left)
        if output["type"] == "websocket.close":
            return output["code"]


async def refused_and_closed(ws: WebsocketCommunicator, message: dict, code: int) -> dict:
    """Send ``message``: it must be refused with ``unauthorized``, then the socket closed."""
    await ws.send_json_to(message)
    reply = await next_reply(ws, kinds=("reply", "scan"))
    assert reply["ok"] is False and reply["error"]["code"] == "unauthorized", reply
    assert await closed_within(ws, 1) == code
    return reply


# -- the push: an idle socket closes within a second ----------------------------------------


async def test_logout_closes_the_tablet_of_that_session(table):
    client = await db(logged_in)("dealer")
    other = await db(logged_in)("dealer")  # the same dealer on a second device
    ws, ws_other = await tablet(table, client), await tablet(table, other)
    await db(client.post)("/croupier/logout/")
    assert await closed_within(ws, 1) == 4401
    # The other device's session still holds: its socket stays and works.
    assert await ws_other.receive_nothing(timeout=0.5)
    await ws_other.send_json_to({"type": "state", "client_id": "still"})
    assert (await next_reply(ws_other))["ok"]
    await ws_other.disconnect()


@pytest.mark.parametrize(
    "change",
    [
        "deactivated",
        "password changed",
        "role removed",
        "role group cleared",
        "taken off the table",
        "deleted",
    ],
)
async def test_losing_the_tablet_closes_it(table, change):
    ws = await tablet(table, await db(logged_in)("dealer"))

    def revoke():
        user = User.objects.get(username="dealer")
        dealers = Group.objects.get(name=roles.DEALER)
        if change == "deactivated":
            user.is_active = False
            user.save()
        elif change == "password changed":  # elsewhere: every other session of the user ends
            user.set_password("another-pw")
            user.save()
        elif change == "role removed":
            user.groups.remove(dealers)
        elif change == "role group cleared":
            dealers.user_set.clear()
        elif change == "taken off the table":
            table.staff.remove(user)
        else:
            user.delete()

    await db(revoke)()
    expected = (
        4403 if change in {"role removed", "role group cleared", "taken off the table"} else 4401
    )
    assert await closed_within(ws, 1) == expected


async def test_a_new_station_credential_closes_the_station_socket(table):
    ws = await join(table, "s1", "s1-secret")

    def revoke():
        station = Station.objects.get(table=table, name="s1")
        station.set_credential("s1-new-secret")
        station.save()

    await db(revoke)()
    assert await closed_within(ws, 1) == 4401


async def test_a_new_reader_key_closes_the_reader_socket(table):
    ws = await reader(table)

    def revoke():
        fresh = Table.objects.get(pk=table.pk)
        fresh.set_reader_key("another-reader-secret")
        fresh.save()

    await db(revoke)()
    assert await closed_within(ws, 1) == 4401


async def test_changes_that_end_nothing_leave_the_sockets_open(table):
    ws_tablet = await tablet(table, await db(logged_in)("dealer"))
    ws_station = await join(table, "s1", "s1-secret")
    ws_reader = await reader(table)

    def harmless():
        logged_in("dealer")  # a login elsewhere saves last_login
        user = User.objects.get(username="dealer")
        user.first_name = "Dana"
        user.save()
        user.groups.add(Group.objects.get_or_create(name=roles.SUPERVISOR)[0])
        Table.objects.get(pk=table.pk).save()  # saved with the same reader key
        Station.objects.get(table=table, name="s1").save()

    await db(harmless)()
    for ws in (ws_tablet, ws_station, ws_reader):
        assert await ws.receive_nothing(timeout=0.3)
    await ws_tablet.send_json_to({"type": "state", "client_id": "t"})
    assert (await next_reply(ws_tablet))["ok"]
    await ws_station.send_json_to({"type": "state", "client_id": "s"})
    assert (await next_reply(ws_station))["ok"]
    for ws in (ws_tablet, ws_station, ws_reader):
        await ws.disconnect()


# -- every message: a change the signals did not see is caught by the next message -----------


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("session deleted", 4401),
        ("deactivated", 4401),
        ("role lost", 4403),
        ("off the table", 4403),
    ],
)
async def test_the_tablet_checks_its_session_on_every_message(table, change, code):
    client = await db(logged_in)("dealer")
    ws = await tablet(table, client)

    def revoke_quietly():  # queryset updates and deletes send no save or m2m signal
        user = User.objects.get(username="dealer")
        if change == "session deleted":
            Session.objects.filter(session_key=client.session.session_key).delete()
        elif change == "deactivated":
            User.objects.filter(pk=user.pk).update(is_active=False)
        elif change == "role lost":
            User.groups.through.objects.filter(user=user).delete()
        else:
            Table.staff.through.objects.filter(user=user).delete()

    await db(revoke_quietly)()
    await refused_and_closed(ws, {"type": "open_table", "client_id": "o1"}, code)
    assert not await db(lambda: Table.objects.get(pk=table.pk).is_open)()


async def test_the_station_checks_its_credential_on_every_message(table):
    round = await db(writer.open_round)(table)
    ws = await join(table, "s1", "s1-secret")
    await db(Station.objects.filter(table=table, name="s1").update)(
        credential=hash_token("s1-new-secret")
    )
    bet = {"type": "place", "client_id": "p1", "box": 1, "amount": "10"}
    await refused_and_closed(ws, bet, 4401)
    assert not await db(BetSlip.objects.filter(round_id=round.pk).exists)()


async def test_a_deactivated_station_is_refused_at_its_next_message(table):
    await db(writer.open_round)(table)
    ws = await join(table, "s1", "s1-secret")
    await db(Station.objects.filter(table=table, name="s1").update)(is_active=False)
    await refused_and_closed(ws, {"type": "state", "client_id": "s1"}, 4401)


async def test_the_reader_checks_its_key_on_every_message(table):
    ws = await reader(table)
    await db(Table.objects.filter(pk=table.pk).update)(reader_key=hash_token("another"))
    before = await db(lambda: list(Round.objects.values_list("pk", "phase")))()
    reply = await refused_and_closed(ws, {"type": "card", "seq": 1, "card": "AS"}, 4401)
    assert reply["type"] == "scan" and reply["seq"] == 1
    assert await db(lambda: list(Round.objects.values_list("pk", "phase")))() == before


# -- which tables a tablet may open -----------------------------------------------------------


async def test_a_dealer_opens_only_the_tablets_of_the_tables_they_work(table):
    other = await db(
        lambda: make_table("t2", "reader-2", {}, Jurisdiction.objects.create(code="other"))
    )()
    client = await db(logged_in)("dealer")
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    ws = WebsocketCommunicator(
        application, f"/ws/tables/{other.pk}/croupier/", headers=ORIGIN + [(b"cookie", cookie)]
    )
    assert (await ws.connect())[0]
    assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    # A floor manager works every table.
    await db(ensure_role_permissions)()
    await db(make_user)("floor", roles.FLOOR_MANAGER)
    ws = await tablet(other, await db(logged_in)("floor"))
    await ws.disconnect()
