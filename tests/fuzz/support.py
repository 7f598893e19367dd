"""The fuzzers' helpers: tables, sockets, the database snapshot and the case counters.

The table ``t1`` has stations s1 and s2 (100.00 each) and a reader key; a second table
``t2`` has its own station s1 and reader key (messages for another table). Timers are long
(nothing expires behind a fuzzer's back) and the tests fire nothing themselves. Every
fuzzer counts its cases in ``CASES`` (printed at the end of the run: docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.db.models import Sum
from django.test import Client

from payouts.models import LedgerEntry, StationMeter, TableMeter
from payouts.specials.defaults import default_paytable_rows
from rounds.engine import RuleSet
from rounds.models import Bet, Hand, Round, RoundEvent
from stations.commands import place_bets
from stations.models import BetSlip, Station
from stations.services import cash_in
from tablehub.asgi import application
from tablehub.models import Shoe, Table, TableConfig

ORIGIN = [(b"origin", b"http://127.0.0.1")]
IDS = itertools.count()  # fresh client ids and probe ids, unique across the fuzzers
db = database_sync_to_async

ROOT = Path(__file__).resolve().parents[2]


def documented_codes(doc: str) -> set[str]:
    """The codes in the first column of the "Error codes" table of a doc (docs/protocol.md,
    docs/croupier.md): a code the server answers with must be documented there."""
    text = (ROOT / "docs" / doc).read_text()
    table = text[text.index("Error codes") :]
    codes = set()
    for line in table.splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            codes.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return codes


# The door's own code, rate_limited, is documented in docs/reliability.md (and protocol.md).
STATION_CODES = documented_codes("protocol.md") | {"rate_limited"}
READER_CODES = STATION_CODES
TABLET_CODES = documented_codes("croupier.md") | {"rate_limited"}

# Cases per fuzzer: {"station socket (betting)": Counter({"cases": n, "refused": r, ...})}
CASES: dict[str, Counter] = {}


def count(fuzzer: str, **numbers: int) -> None:
    CASES.setdefault(fuzzer, Counter()).update(numbers)


# -- tables


def pays(code):
    return default_paytable_rows()[code]["pays"]


def make_table(name: str, reader_key: str, stations: dict[str, str], jurisdiction) -> Table:
    table = Table.objects.create(name=name, jurisdiction=jurisdiction)
    table.set_reader_key(reader_key)
    table.save()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        limits={"main": ["1", "100"], "special": ["1", "25"], "let_it_play": ["0", "200"]},
        timers={"betting": 3600, "insurance": 3600, "decision": 3600, "bonus": 3600},
        special_bets={code: pays(code) for code in ("21+3", "pair", "bust", "in_for_6")},
    )
    for station_name, secret in stations.items():
        station = Station(table=table, name=station_name)
        station.set_credential(secret)
        station.save()
        cash_in(station, "100", key="start")
    return table


def bets_closed(table: Table) -> None:
    """A round with s1 on box 1 and s2 on box 2 (10.00 each), bets closed: it wants cards."""
    from rounds import writer

    round = writer.open_round(table)
    for name, box in (("s1", 1), ("s2", 2)):
        station = Station.objects.get(table=table, name=name)
        place_bets(station, [(box, "main", Decimal("10"))])
    writer.close_bets(round.pk)


def reader_seq(table: Table) -> int:
    from croupier.services import current_shoe

    return current_shoe(table).reader_seq


def resolve(message: dict, seq: int) -> dict:
    """Sequence numbers drawn as offsets become numbers around the reader's own."""
    value = message.get("seq")
    if isinstance(value, tuple):
        return message | {"seq": seq + value[1]}
    return message


# -- the database, before and after ----------------------------------------------------------


def snapshot() -> dict:
    """Everything a refused message must leave as it was."""
    return {
        "ledger": LedgerEntry.objects.count(),
        "balances": {
            s.pk: LedgerEntry.objects.filter(station=s).aggregate(t=Sum("amount"))["t"]
            for s in Station.objects.order_by("pk")
        },
        "bets": sorted(
            Bet.objects.values_list("round_id", "station_id", "box", "code", "stake", "returned")
        ),
        "slips": sorted(
            (s.round_id, s.station_id, json.dumps(s.groups)) for s in BetSlip.objects.all()
        ),
        "rounds": list(
            Round.objects.order_by("pk").values_list("pk", "phase", "last_seq", "step_key")
        ),
        "events": RoundEvent.objects.count(),
        "hands": Hand.objects.count(),
        "shoes": list(
            Shoe.objects.order_by("pk").values_list("pk", "reader_seq", "cards_drawn", "closed_at")
        ),
        "open": list(Table.objects.order_by("pk").values_list("pk", "is_open")),
        "meters": [
            list(StationMeter.objects.order_by("pk").values()),
            list(TableMeter.objects.order_by("pk").values()),
        ],
    }


def station_part(snap: dict, station: Station) -> tuple:
    """What belongs to one station in a snapshot: its balance, bets and slips."""
    return (
        snap["balances"][station.pk],
        [b for b in snap["bets"] if b[1] == station.pk],
        [s for s in snap["slips"] if s[1] == station.pk],
    )


def ledger_balances() -> None:
    """Every movement has its house side; every station's credits are its entries' sum."""
    total = LedgerEntry.objects.aggregate(t=Sum("amount"))["t"] or Decimal(0)
    assert total == 0, total
    house = LedgerEntry.objects.filter(station=None).count()
    assert house * 2 == LedgerEntry.objects.count()


def effective_client_id(kind: str, payload) -> str | None:
    """The client id the server reads from a case: a message's, or a raw frame's when it
    decodes (a valid one: a string of 1 to 64 characters)."""
    from tablehub.consumers import Refused, client_id_of, decode_frame

    if kind == "json":
        return client_id_of(payload)
    if kind != "text":
        return None
    try:
        return client_id_of(decode_frame(payload))
    except Refused as exc:
        return client_id_of(exc.content)


# -- sockets ---------------------------------------------------------------------------------


_LAYER_LOOP: list[asyncio.AbstractEventLoop | None] = [None]


def a_layer_for_this_loop() -> None:
    """Each hypothesis case runs on an event loop of its own, and channels_redis binds a
    layer's receive lock (one for all the process's sockets) to the loop that first waited on
    it: a case's first socket gets a fresh layer, as each async test does (tests/conftest.py),
    so that a receive an earlier case left pending cannot hold a lock of a stopped loop."""
    loop = asyncio.get_running_loop()
    if _LAYER_LOOP[0] is not loop:
        channel_layers.backends.clear()
        _LAYER_LOOP[0] = loop


async def connect(path: str, headers=ORIGIN) -> WebsocketCommunicator:
    a_layer_for_this_loop()
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect()
    assert connected, path
    return communicator


async def next_reply(ws: WebsocketCommunicator, kinds=("reply",)) -> dict:
    """The next frame of one of ``kinds`` (events in between are skipped)."""
    while True:
        frame = await ws.receive_json_from(timeout=10)
        if frame.get("type") in kinds:
            return frame


async def send_and_probe(
    ws: WebsocketCommunicator, fuzzer: str, send, again: bool, payload: object
) -> dict:
    """One fuzz case on ``ws``: ``send()`` sends it and returns (reply, outcome); with
    ``again`` it is sent a second time on the same socket (a replay, counted). Then the
    socket must still answer a valid ``state``. Closes the socket, counts the case and
    returns the reply (``payload`` is what FUZZ_TRACE prints)."""
    try:
        reply, outcome = await send()
        if again:
            _, replayed = await send()
            count(fuzzer, **{f"replayed, {replayed}": 1})
        probe = f"probe-{next(IDS)}"
        await ws.send_json_to({"type": "state", "client_id": probe})
        alive = await next_reply(ws)
        assert alive["ok"] and alive["client_id"] == probe, alive
    finally:
        await ws.disconnect()
    code = reply.get("error", {}).get("code", "ok")
    if os.environ.get("FUZZ_TRACE"):
        print(code, repr(payload)[:200])
    count(fuzzer, cases=1, **{outcome: 1, f"code {code}": 1})
    return reply


async def join(table: Table, name: str, secret: str | None = None) -> WebsocketCommunicator:
    ws = await connect(f"/ws/tables/{table.pk}/station/")
    await ws.send_json_to(
        {
            "type": "join",
            "client_id": "j",
            "station": name,
            "credential": secret or f"{name}-secret",
        }
    )
    reply = await next_reply(ws)
    assert reply["ok"], reply
    return ws


def session_headers(username: str) -> list:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return ORIGIN + [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]
