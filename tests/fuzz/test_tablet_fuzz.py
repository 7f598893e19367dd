"""Fuzzing the croupier tablet's socket (docs/croupier.md) through the real ASGI application,
logged in as a dealer, with a betting round open and bets on it.

Hypothesis generates commands with fields of the wrong type, unknown fields, supervisor
logins that are wrong or of the wrong shape, reasons too long, rounds of another table,
client ids used before, and broken frames. For every case: exactly one reply with the
command's client id; a refusal has a documented code (never ``server_error``) and changes
nothing (rounds, events, ledger, bets, shoes, the table's open flag); a client id answered
before on this connection gets the same reply again; the ledger balances; and the socket
answers a valid ``state`` afterwards. Who may connect at all is tested at the end.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from channels.testing import WebsocketCommunicator
from hypothesis import given
from hypothesis import strategies as st

from croupier.tablet import open_table
from rounds import writer
from rounds.models import Round
from stations.commands import place_bets
from stations.models import Station
from tablehub.asgi import application
from tablehub.consumers import Refused, check_value, decode_frame
from tests.fuzz.strategies import (
    FRESH,
    RAW_FRAMES,
    TABLET_MESSAGES,
    frame_text,
    fuzz_settings,
    weighted,
)
from tests.fuzz.support import (
    IDS,
    ORIGIN,
    TABLET_CODES,
    a_layer_for_this_loop,
    db,
    effective_client_id,
    ledger_balances,
    next_reply,
    send_and_probe,
    session_headers,
    snapshot,
)

FUZZER = "tablet socket"


def betting_with_bets(table) -> None:
    open_table(table)
    for name, box in (("s1", 1), ("s2", 2)):
        station = Station.objects.get(table=table, name=name)
        place_bets(station, [(box, "main", Decimal("10"))])


@pytest.fixture
def betting(world):
    betting_with_bets(world)
    return world


class Tablet(WebsocketCommunicator):
    replies: dict[str, dict]  # what this connection answered, by client id


async def open_tablet(table) -> Tablet:
    """A tablet socket of its own for each case (the event loop stops between hypothesis's
    cases, which a long-lived socket on the Redis layer would not survive)."""
    headers = await db(session_headers)("dealer")
    a_layer_for_this_loop()
    ws = Tablet(application, f"/ws/tables/{table.pk}/croupier/", headers=headers)
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from())["type"] == "state"
    ws.replies = {}
    return ws


def refused_at_the_door(kind: str, payload) -> bool:
    try:
        if kind == "json":
            check_value(payload)
        else:
            decode_frame(payload)
    except Refused:
        return True
    return False


def other_tables_round() -> int:
    """A round of the other table (a ``round`` field naming it is not this table's)."""
    from tablehub.models import Table

    other = Table.objects.get(name="t2")
    round = other.rounds.first() or writer.open_round(other)
    return round.pk


@pytest.mark.django_db(transaction=True)
@fuzz_settings(120)
@given(
    case=weighted(
        90, TABLET_MESSAGES.map(lambda m: ("json", m)), RAW_FRAMES.map(lambda t: ("text", t))
    ),
    foreign_round=st.booleans(),
    again=weighted(75, st.just(False), st.just(True)),
)
async def test_tablet_socket(betting, no_rate_limit, case, foreign_round, again):
    kind, payload = case
    if kind == "json":
        if payload.get("client_id") == FRESH:
            payload = payload | {"client_id": f"fresh-{next(IDS)}"}
        if foreign_round and "round" in payload:
            payload = payload | {"round": await db(other_tables_round)()}
    tablet = await open_tablet(betting)
    await send_and_probe(tablet, FUZZER, lambda: send_case(tablet, kind, payload), again, payload)


async def send_case(tablet: Tablet, kind: str, payload) -> tuple[dict, str]:
    client_id = effective_client_id(kind, payload)
    before = await db(snapshot)()
    if kind == "json":
        await tablet.send_to(text_data=frame_text(payload))
    else:
        await tablet.send_input({"type": "websocket.receive", "text": payload})
    reply = await next_reply(tablet)
    after = await db(snapshot)()

    assert reply["type"] == "reply" and isinstance(reply["ok"], bool), (payload, reply)
    assert reply["client_id"] == client_id, (payload, reply)
    answered = tablet.replies.get(client_id) if client_id is not None else None
    await db(ledger_balances)()
    if reply.get("resent"):
        assert answered is not None and reply == answered | {"resent": True}, (payload, reply)
        assert after == before
        return reply, "resent"
    assert answered is None or refused_at_the_door(kind, payload), (payload, reply)
    if client_id is not None and not refused_at_the_door(kind, payload):
        tablet.replies[client_id] = reply
    if reply["ok"]:
        return reply, "accepted"
    error = reply["error"]
    assert error["code"] in TABLET_CODES - {"server_error"}, (payload, reply)
    assert error["message"], reply
    assert after == before, (payload, reply)
    return reply, "refused"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "user, table, code",
    [(None, "t1", 4401), ("guest", "t1", 4403), ("dealer", "none", 4404)],
)
async def test_who_may_not_use_the_tablet_is_closed_out(world, user, table, code):
    headers = await db(session_headers)(user) if user else ORIGIN
    table_id = world.pk if table == "t1" else 999999
    ws = WebsocketCommunicator(application, f"/ws/tables/{table_id}/croupier/", headers=headers)
    assert (await ws.connect())[0]
    assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": code}
    await ws.disconnect()
    assert await db(Round.objects.count)() == 0
