"""Fuzzing the card reader's socket (docs/protocol.md, Card reader) through the real ASGI
application, while a round waits for its cards.

Hypothesis generates ``card`` messages with sequence numbers around the reader's own (a
duplicate, the next one, gaps, going back) or of the wrong type, cards that are real, lower
case, ten as ``10``, unreadable or not text, ``burn`` flags of every type, unknown fields, and
broken frames. For every case: exactly one ``scan`` reply; a refusal has a documented code
and changes nothing (shoe, round, events, ledger); a duplicate changes nothing; an accepted
card moves the reader's sequence by one and adds one event; the ledger balances; and the
socket keeps answering.
"""

from __future__ import annotations

import os

import pytest
from channels.testing import WebsocketCommunicator
from hypothesis import given
from hypothesis import strategies as st

from rounds.models import RoundEvent
from tablehub.models import Table
from tests.fuzz.strategies import (
    BINARY_FRAMES,
    RAW_FRAMES,
    SHOE_MESSAGES,
    frame_text,
    fuzz_settings,
    weighted,
)
from tests.fuzz.support import (
    READER_CODES,
    bets_closed,
    connect,
    count,
    db,
    ledger_balances,
    reader_seq,
    resolve,
    snapshot,
)

FUZZER = "reader socket, round being dealt"


@pytest.fixture
def dealing(world):
    bets_closed(world)
    return world


async def hello(table) -> WebsocketCommunicator:
    """A reader socket of its own for each case (the event loop stops between hypothesis's
    cases, which a long-lived socket on the Redis layer would not survive)."""
    ws = await connect(f"/ws/tables/{table.pk}/shoe/")
    await ws.send_json_to({"type": "hello", "key": "reader-secret"})
    assert (await ws.receive_json_from())["ok"]
    return ws


@pytest.mark.django_db(transaction=True)
@fuzz_settings(150)
@given(
    case=weighted(
        85,
        SHOE_MESSAGES.map(lambda m: ("json", m)),
        st.one_of(RAW_FRAMES.map(lambda t: ("text", t)), BINARY_FRAMES.map(lambda b: ("bytes", b))),
    )
)
async def test_reader_socket(dealing, no_rate_limit, case):
    reader = await hello(dealing)
    try:
        await reader_case(dealing, reader, case)
    finally:
        await reader.disconnect()


async def reader_case(dealing, reader, case) -> None:
    kind, payload = case
    seq = await db(reader_seq)(dealing)
    before = await db(snapshot)()
    events = await db(RoundEvent.objects.count)()
    if kind == "json":
        payload = resolve(payload, seq)
        await reader.send_to(text_data=frame_text(payload))
    else:
        await reader.send_input({"type": "websocket.receive", kind: payload})
    reply = await reader.receive_json_from(timeout=10)
    after = await db(snapshot)()

    assert reply["type"] == "scan" and isinstance(reply["ok"], bool), (payload, reply)
    if reply["ok"] and not reply["duplicate"]:
        assert reply["seq"] == seq + 1 == await db(reader_seq)(dealing), (payload, reply)
        assert await db(RoundEvent.objects.count)() == events + 1
        assert "card" not in reply  # never echoed: it may be the hole card
        outcome = "accepted"
    elif reply["ok"]:
        assert after == before, (payload, reply)
        outcome = "duplicate"
    else:
        assert reply["error"]["code"] in READER_CODES - {"server_error"}, (payload, reply)
        assert reply["error"]["message"]
        assert after == before, (payload, reply)
        outcome = "refused"
    await db(ledger_balances)()
    # Still answering: a repeated scan is a duplicate (or, before any card, a bad seq).
    probe = await db(reader_seq)(dealing)
    await reader.send_json_to({"type": "card", "seq": probe, "card": "2C"})
    alive = await reader.receive_json_from(timeout=10)
    assert alive["type"] == "scan"
    assert alive["ok"] if probe else alive["error"]["code"] == "bad_message"
    code = reply.get("error", {}).get("code", "ok")
    if os.environ.get("FUZZ_TRACE"):
        print(code, repr(payload)[:160])
    count(FUZZER, cases=1, **{outcome: 1, f"code {code}": 1})


@pytest.mark.django_db(transaction=True)
async def test_the_reader_must_say_hello_with_its_own_tables_key(dealing, no_rate_limit):
    other = await db(Table.objects.get)(name="t2")
    before = await db(snapshot)()
    for table, hello in [
        (dealing, {"type": "card", "seq": 1, "card": "9S"}),  # no hello: a card first
        (dealing, {"type": "hello", "key": "nope"}),
        (dealing, {"type": "hello", "key": "other-reader"}),  # another table's key
        (dealing, {"type": "hello", "key": ["reader-secret"]}),
        (other, {"type": "hello", "key": "reader-secret"}),  # this table's key elsewhere
    ]:
        ws = await connect(f"/ws/tables/{table.pk}/shoe/")
        await ws.send_json_to(hello)
        reply = await ws.receive_json_from()
        assert (reply["type"], reply["ok"], reply["error"]["code"]) == (
            "hello",
            False,
            "unauthorized",
        )
        await ws.send_json_to({"type": "card", "seq": 1, "card": "9S"})
        assert (await ws.receive_json_from())["error"]["code"] == "unauthorized"
        await ws.disconnect()
    assert await db(snapshot)() == before
