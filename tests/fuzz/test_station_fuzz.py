"""Fuzzing the station socket (docs/protocol.md) through the real ASGI application.

Hypothesis generates messages with broken fields (wrong types, huge or negative numbers,
more decimals than cents, unknown fields, another station's name or hand, client ids used
before) and broken frames. For every case: exactly one reply, with the message's client id;
a refusal has a documented code and changes nothing in the database (ledger, bets, slips,
rounds, events, hands, shoes); a resent client id gets the stored reply and changes
nothing; whatever happens, the other stations' money and bets are untouched, the ledger
balances, and the socket answers a valid ``state`` afterwards.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from channels.testing import WebsocketCommunicator
from hypothesis import given
from hypothesis import strategies as st

from payouts import ledger
from rounds import voids, writer
from rounds.engine import CardDrawn, parse_card
from rounds.models import Bet, Round
from stations.commands import place_bets
from stations.models import Station, StationCommand
from tablehub.asgi import application
from tablehub.consumers import Refused, check_text
from tablehub.models import Table
from tests.fuzz.strategies import (
    ACTIONS,
    BINARY_FRAMES,
    FRESH,
    RAW_FRAMES,
    STATION_MESSAGES,
    frame_text,
    fuzz_settings,
    message_for,
    weighted,
)
from tests.fuzz.support import (
    IDS,
    STATION_CODES,
    connect,
    db,
    effective_client_id,
    join,
    ledger_balances,
    next_reply,
    send_and_probe,
    snapshot,
    station_part,
)

DECISIONS = message_for(
    st.just("decide"),
    {
        "action": ACTIONS,
        "hand": st.one_of(st.sampled_from(["s1/1/1", "s1/1/2", "s2/2/1", "s1/2/1"]), ACTIONS),
    },
)
CASES = weighted(
    80,
    STATION_MESSAGES.map(lambda m: ("json", m)),
    st.one_of(RAW_FRAMES.map(lambda t: ("text", t)), BINARY_FRAMES.map(lambda b: ("bytes", b))),
)


def stored_reply(station: Station, client_id: str | None) -> dict | None:
    if client_id is None or refused_text(client_id):
        return None  # a NUL or a lone surrogate: never stored (nor storable)
    row = StationCommand.objects.filter(station=station, client_id=client_id).first()
    return row.reply if row is not None else None


def refused_text(text: str) -> bool:
    try:
        check_text(text)
    except Refused:
        return True
    return False


def others(table: Table) -> list[Station]:
    """Every station but s1 of ``table``: s2, and the other table's s1."""
    return list(Station.objects.exclude(table=table, name="s1"))


async def play_case(table: Table, fuzzer: str, case, again: bool = False) -> dict:
    """s1 joins on a socket of its own (a socket per case: the event loop stops between
    hypothesis's cases, which a long-lived socket on the Redis layer would not survive),
    the case is sent (twice with ``again``: a replay), and the socket must still answer a
    valid ``state``."""
    kind, payload = case
    if kind == "json" and payload.get("client_id") == FRESH:
        payload = payload | {"client_id": f"fresh-{next(IDS)}"}
    ws = await join(table, "s1")
    return await send_and_probe(
        ws, fuzzer, lambda: send_case(ws, table, kind, payload), again, payload
    )


async def send_case(ws: WebsocketCommunicator, table: Table, kind: str, payload) -> tuple:
    """Send one frame to s1's socket and check everything the module docstring promises."""
    s1 = await db(Station.objects.get)(table=table, name="s1")
    bystanders = await db(others)(table)
    client_id = effective_client_id(kind, payload)
    before = await db(snapshot)()
    stored = await db(stored_reply)(s1, client_id)
    if kind == "json":
        await ws.send_to(text_data=frame_text(payload))
    else:
        await ws.send_input({"type": "websocket.receive", kind: payload})
    reply = await next_reply(ws)
    after = await db(snapshot)()

    assert reply["type"] == "reply" and isinstance(reply["ok"], bool), reply
    assert reply["client_id"] == client_id, (payload, reply)
    for other in bystanders:  # nothing a station sends touches another station
        assert station_part(after, other) == station_part(before, other), (payload, reply)
    if reply.get("resent"):
        assert stored is not None and reply == stored | {"resent": True}, (payload, reply)
        assert after == before
        return reply, "resent"
    if reply["ok"]:
        assert stored is None, (payload, reply)  # a client id is applied once
        assert reply["state"]["credits"] == str(await db(ledger.balance)(s1))
        await db(ledger_balances)()
        return reply, "accepted"
    error = reply["error"]
    # Never server_error: bad input gets its own documented code, and nothing fails.
    assert error["code"] in STATION_CODES - {"server_error"}, (payload, reply)
    assert isinstance(error["message"], str) and error["message"], reply
    assert after == before, (payload, reply)  # a refusal changes nothing
    if stored is not None:  # refused at the door: not the stored reply, nothing applied
        assert error["code"] in ("bad_message", "bad_json"), (payload, reply)
    return reply, "refused"


# -- betting ---------------------------------------------------------------------------------


@pytest.fixture
def betting(world):
    writer.open_round(world)
    return world


@pytest.mark.django_db(transaction=True)
@fuzz_settings(160)
@given(case=CASES, again=weighted(80, st.just(False), st.just(True)))
async def test_station_socket_while_bets_are_open(betting, no_rate_limit, case, again):
    await play_case(betting, "station socket, bets open", case, again)


# -- a round in play -------------------------------------------------------------------------


# Deals that ask s1 something (box 1): cards in the order they leave the shoe (box 1, box 2,
# dealer up, box 1, box 2, hole); s1's bets besides its main 10 on box 1.
DEALS = [
    ("8S TD 9H 8H 6C 7D", {"pair": "5"}),  # a pair of eights: split, double, ...
    ("5S TD 9H 6H 6C 7D", {}),  # eleven: double
    ("TS TD AH 6H 6C 7D", {"21+3": "5"}),  # the dealer shows an ace: insurance
    ("AS TD AH KH 6C 7D", {}),  # blackjack against an ace: even money
    ("2S TD 9H 4H 6C 7D", {"in_for_6": "5"}),  # a hard six: the In For 6 pick
    ("TS 9D 6H 2H 6C 7D", {"bust": "5"}),  # twelve against a six
]


def deal_a_round(table: Table, deal: int = 0) -> Round:
    """A round in which s1 (box 1) and s2 (box 2, main 10) have hands and s1 is asked."""
    cards, specials = DEALS[deal]
    round = writer.open_round(table)
    s1, s2 = (
        Station.objects.get(table=table, name="s1"),
        Station.objects.get(table=table, name="s2"),
    )
    place_bets(s1, [(1, "main", Decimal("10"))])
    for code, stake in specials.items():
        place_bets(s1, [(1, code, Decimal(stake))])
    place_bets(s2, [(2, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in cards.split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    return round


def s1_is_asked(table: Table, deal: int) -> None:
    """Keep a question open for s1: a round where it has none is voided (every stake
    back) and the next one dealt."""
    round = table.rounds.order_by("-pk").first()
    assert round is not None  # the in_play fixture dealt one
    if round.phase not in (Round.Phase.SETTLED, Round.Phase.VOID):
        if writer.state(round.pk).prompt_for("s1") is not None:
            return
        voids.void_round(round.pk, by="fuzz", reason="the fuzzer needs a question for s1")
    deal_a_round(table, deal)


@pytest.fixture
def in_play(world):
    deal_a_round(world)
    return world


@pytest.mark.django_db(transaction=True)
@fuzz_settings(120)
@given(
    case=weighted(
        90,
        st.one_of(
            st.integers(0, 5).map(lambda n: ("answer", n)),
            st.one_of(DECISIONS, STATION_MESSAGES).map(lambda m: ("json", m)),
        ),
        RAW_FRAMES.map(lambda t: ("text", t)),
    ),
    deal=st.integers(0, len(DEALS) - 1),
)
async def test_station_socket_while_a_round_is_in_play(in_play, no_rate_limit, case, deal):
    await db(s1_is_asked)(in_play, deal)
    kind, payload = case
    if kind == "answer":  # one of the answers the question allows, for the hand it is about
        round = await db(lambda: in_play.rounds.order_by("-pk").first())()
        prompt = (await db(writer.state)(round.pk)).prompt_for("s1")
        answer = {
            "type": "decide",
            "client_id": FRESH,
            "action": prompt["allowed"][payload % len(prompt["allowed"])],
        }
        case = ("json", answer | ({"hand": prompt["hand"]} if "hand" in prompt else {}))
    reply = await play_case(in_play, "station socket, round in play", case)
    if reply["ok"] and reply["state"]["round"]["phase"] not in ("dealer", "settled", "void"):
        assert "7D" not in json.dumps(reply)  # the hole card of every deal, still face down


# -- targeted cases --------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_replayed_message_is_applied_once(betting, no_rate_limit):
    ws = await join(betting, "s1")
    s1 = await db(Station.objects.get)(table=betting, name="s1")
    replies = []
    for _ in range(3):
        await ws.send_json_to({"type": "cash_in", "client_id": "c-1", "amount": "5.00"})
        replies.append(await next_reply(ws))
    assert replies[0]["ok"] and replies[0]["state"]["credits"] == "105.00"
    assert replies[1] == replies[2] == replies[0] | {"resent": True}
    for _ in range(2):
        await ws.send_json_to({"type": "place", "client_id": "p-1", "box": 1, "amount": "10"})
        await next_reply(ws)
    bets = await db(
        lambda: list(Bet.objects.filter(station=s1).values_list("box", "code", "stake"))
    )()
    assert bets == [(1, "main", Decimal("10.00"))]
    assert await db(ledger.balance)(s1) == Decimal("105.00")
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_messages_for_another_station_or_table_touch_only_the_sender(betting, no_rate_limit):
    ws = await join(betting, "s1")
    before = await db(snapshot)()
    await ws.send_json_to(
        {"type": "place", "client_id": "x", "station": "s2", "box": 2, "amount": "10"}
    )
    reply = await next_reply(ws)
    assert reply["ok"] and reply["state"]["station"] == "s1"  # the socket's station, always
    after = await db(snapshot)()
    s2 = await db(Station.objects.get)(table=betting, name="s2")
    assert station_part(after, s2) == station_part(before, s2)
    await ws.disconnect()

    other = await db(Table.objects.get)(name="t2")
    for table, name, secret in [
        (other, "s1", "s1-secret"),  # t1's credential at t2
        (betting, "s1", "t2-s1-secret"),  # t2's credential at t1
        (betting, "s2", "s1-secret"),  # another station's credential
        (betting, "s9", "s1-secret"),  # no such station
    ]:
        ws = await connect(f"/ws/tables/{table.pk}/station/")
        await ws.send_json_to(
            {"type": "join", "client_id": "j", "station": name, "credential": secret}
        )
        assert (await next_reply(ws))["error"]["code"] == "unauthorized"
        await ws.send_json_to({"type": "cash_out", "client_id": "o"})
        assert (await next_reply(ws))["error"]["code"] == "not_joined"
        await ws.disconnect()
    assert await db(snapshot)() == after


@pytest.mark.django_db(transaction=True)
async def test_a_decision_about_another_stations_hand_changes_nothing(in_play, no_rate_limit):
    ws = await join(in_play, "s1")
    before = await db(snapshot)()
    for hand in ("s2/2/1", "s1/2/1", "s1/1/9"):
        await ws.send_json_to(
            {"type": "decide", "client_id": hand, "action": "stand", "hand": hand}
        )
        reply = await next_reply(ws)
        assert reply["error"]["code"] in ("wrong_hand", "not_allowed"), reply
    assert await db(snapshot)() == before
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["station", "shoe", "croupier"])
@pytest.mark.parametrize(
    "origin", [[(b"origin", b"http://evil.example")], [(b"origin", b"null")], []]
)
async def test_a_wrong_or_missing_origin_is_refused(world, path, origin):
    communicator = WebsocketCommunicator(
        application, f"/ws/tables/{world.pk}/{path}/", headers=origin
    )
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_before_joining_every_command_is_not_joined(world, no_rate_limit):
    ws = await connect(f"/ws/tables/{world.pk}/station/")
    before = await db(snapshot)()
    for kind in ("place", "cash_in", "cash_out", "decide", "state", "clear", "rebet"):
        await ws.send_json_to({"type": kind, "client_id": kind, "box": 1, "amount": "10"})
        reply = await next_reply(ws)
        assert (reply["client_id"], reply["error"]["code"]) == (kind, "not_joined")
    assert await db(snapshot)() == before
    await ws.disconnect()
    missing = await connect("/ws/tables/999999/station/")  # no such table
    await missing.send_json_to({"type": "join", "client_id": "j", "station": "s1",
                                "credential": "s1-secret"})  # fmt: skip
    assert (await next_reply(missing))["error"]["code"] == "unauthorized"
    await missing.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_decision_from_a_station_without_a_hand_changes_nothing(world, no_rate_limit):
    def s1_alone():
        round = writer.open_round(world)
        s1 = Station.objects.get(table=world, name="s1")
        place_bets(s1, [(1, "main", Decimal("10"))])
        writer.close_bets(round.pk)
        for card in ("8S", "9H", "8H", "7D"):
            writer.record(round.pk, CardDrawn(parse_card(card)))

    await db(s1_alone)()
    ws = await join(world, "s2")  # s2 sat this round out
    before = await db(snapshot)()
    await ws.send_json_to({"type": "decide", "client_id": "d", "action": "stand"})
    reply = await next_reply(ws)
    assert reply["error"]["code"] == "not_your_turn", reply  # no hand, so no question
    assert await db(snapshot)() == before
    await ws.disconnect()
