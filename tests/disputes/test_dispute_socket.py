"""A dispute over the real sockets: a station disputes, the table halts, the supervisor corrects
the misread card on the tablet, every station redraws and the round is played out, to the
cent; the hole card never reaches a station before its reveal."""

import json
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.test import Client

from payouts import ledger
from rounds.engine import RuleSet
from stations.models import Station
from stations.services import cash_in
from tablehub import roles
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import (
    ask,
    consumers_connection_closed,  # noqa: F401 (autouse, see there)
    drain,
)

ORIGIN = [(b"origin", b"http://127.0.0.1")]
SUPERVISOR = {"username": "boss", "password": "boss-pw"}
db = database_sync_to_async


@pytest.fixture
def table(transactional_db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    jurisdiction = Jurisdiction.objects.create(
        code="nv", name="Nevada", disputes_allowed=True, dispute_window_seconds=30
    )
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    for name in ("s1", "s2"):
        station = Station(table=table, name=name)
        station.set_credential(f"{name}-secret")
        station.save()
        cash_in(station, "100", key="start")
    for username, role in (("dealer", roles.DEALER), ("boss", roles.SUPERVISOR)):
        user = User.objects.create_user(username, password=f"{username}-pw")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        table.staff.add(user)  # dealers and supervisors work their own tables' tablets
    return table


def session_headers(username):
    client = Client()
    client.force_login(User.objects.get(username=username))
    return [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]


async def connect(path, headers=()):
    communicator = WebsocketCommunicator(application, path, headers=ORIGIN + list(headers))
    connected, _ = await communicator.connect()
    assert connected
    return communicator


def events(frames, kind=None):
    found = [f["event"] for f in frames if f.get("type") == "event"]
    return [e for e in found if kind is None or e["type"] == kind]


@pytest.mark.django_db(transaction=True)
async def test_a_dispute_and_a_correction_over_the_sockets(table):
    pad = await connect(f"/ws/tables/{table.pk}/croupier/", await db(session_headers)("dealer"))
    pad_frames = [await pad.receive_json_from()]
    stations, frames = {}, {}
    for name in ("s1", "s2"):
        stations[name] = await connect(f"/ws/tables/{table.pk}/station/")
        frames[name] = []
        joined = await ask(
            stations[name],
            frames[name],
            {"type": "join", "client_id": "j", "station": name, "credential": f"{name}-secret"},
        )
        assert joined["ok"]

    async def tablet(message):
        reply = await ask(pad, pad_frames, message)
        for name in stations:
            await drain(stations[name], frames[name])
        return reply

    async def station(name, message):
        reply = await ask(stations[name], frames[name], message)
        await drain(pad, pad_frames)
        other = "s2" if name == "s1" else "s1"
        await drain(stations[other], frames[other])
        return reply

    assert (await tablet({"type": "open_table", "client_id": "o"}))["ok"]
    for name, box in (("s1", 1), ("s2", 2)):
        bet = await station(name, {"type": "place", "client_id": "b", "box": box, "amount": "10"})
        assert bet["ok"], bet
    assert (await tablet({"type": "close_bets", "client_id": "c"}))["ok"]
    # Box 1: 9S and a card the reader read as 7H; box 2: 8D 3C; dealer 6C, QH in the hole.
    for n, card in enumerate(["9S", "8D", "6C", "7H", "3C", "QH"]):
        dealt = await tablet({"type": "manual_card", "client_id": f"m{n}", "card": card})
        assert dealt["ok"], dealt

    disputed = await station("s1", {"type": "dispute", "client_id": "d"})
    assert disputed["ok"], disputed
    round_id = disputed["state"]["round"]["id"]
    assert disputed["state"]["round"]["halted"] is True
    for name in stations:
        assert events(frames[name], "halted") == [
            {"type": "halted", "reason": "dispute", "round": round_id}
        ]
    assert events(pad_frames, "halted")
    refused = await station("s2", {"type": "decide", "client_id": "x", "action": "double"})
    assert refused["error"]["code"] == "round_halted"
    card = await tablet({"type": "manual_card", "client_id": "m9", "card": "5D"})
    assert card["error"]["code"] == "round_halted"
    shown = (await tablet({"type": "state", "client_id": "s"}))["state"]
    assert shown["awaiting"] == "dispute: wait for a supervisor"
    assert shown["round"]["dispute"]["station"] == "s1"

    marks = {name: len(frames[name]) for name in stations}
    fixed = await tablet(
        {
            "type": "resolve_dispute",
            "client_id": "r",
            "resolution": "correct",
            "position": 4,
            "card": "2H",
            "supervisor": SUPERVISOR,
        }
    )
    assert fixed["ok"], fixed
    assert fixed["state"]["round"]["cards"][3]["corrected_from"] == "7H"
    for name, cards in (("s1", ["9S", "2H"]), ("s2", ["8D", "3C"])):
        got = events(frames[name][marks[name] :])
        assert got[0] == {"type": "corrected", "round": round_id, "positions": [4]}
        assert got[1]["type"] == "resumed" and got[1]["deadline"]
        [state] = [e["state"] for e in got if e["type"] == "state"]  # its own, nobody else's
        assert state["station"] == name
        assert state["table"]["station"]["hands"][0]["cards"] == cards
        assert state["round"]["halted"] is False
        assert state["table"]["boxes"] == {"1": ["9S", "2H"], "2": ["8D", "3C"]}

    assert (await station("s1", {"type": "decide", "client_id": "d1", "action": "double"}))["ok"]
    assert (await station("s2", {"type": "decide", "client_id": "d2", "action": "stand"}))["ok"]
    for n, card in enumerate(["TD", "5S"]):  # s1: 21; the dealer: 6C QH 5S = 21
        assert (await tablet({"type": "manual_card", "client_id": f"e{n}", "card": card}))["ok"]
    balances = await db(
        lambda: {s.name: ledger.balance(s) for s in Station.objects.filter(table=table)}
    )()
    assert balances == {"s1": Decimal("100.00"), "s2": Decimal("90.00")}
    for name in stations:
        texts = [json.dumps(f) for f in frames[name]]
        reveal = next(i for i, t in enumerate(texts) if '"type": "hole_card"' in t)
        assert all("QH" not in t for t in texts[:reveal]), name
        [settlement] = events(frames[name], "settlement")
        assert settlement["credits"] == str(balances[name])
        await stations[name].disconnect()
    await pad.disconnect()
