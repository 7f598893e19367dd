"""The per-connection rate limit (tablehub/ratelimit.py): a token bucket refuses what is over
it with ``rate_limited`` and does nothing else; a connection that keeps flooding is closed
with 4429. The buckets on a clock of our own, then the three sockets for real."""

from __future__ import annotations

import asyncio
import json
import math
import time
from decimal import Decimal

import pytest
from channels.testing import WebsocketCommunicator

from payouts import ledger
from stations.models import Station, StationCommand
from tablehub import ratelimit
from tablehub.asgi import application
from tablehub.ratelimit import CLOSE_FLOODING, ConnectionLimiter, TokenBucket, Verdict
from tests.fuzz.support import connect, count, db, join, next_reply, session_headers, snapshot


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_token_bucket_allows_its_burst_then_its_rate():
    bucket = TokenBucket(rate=20, capacity=40, now=0.0)
    assert all(bucket.take(0.0) for _ in range(40))
    assert not bucket.take(0.0)
    assert bucket.take(0.05)  # one token back after 1/20 s
    assert not bucket.take(0.05)
    assert [bucket.take(10.0) for _ in range(41)].count(True) == 40  # never above capacity
    assert not bucket.take(9.0)  # a clock going back gives nothing


def test_the_limiter_refuses_over_the_limit_and_closes_a_flood(settings):
    settings.TABLEHUB_RATE_LIMITS = {}
    clock = Clock()
    limiter = ratelimit.for_connection("station", clock)
    verdicts = [limiter.check() for _ in range(200)]
    assert verdicts[:40] == [Verdict.SERVE] * 40
    assert verdicts[40:] == [Verdict.REFUSE] * 160
    assert limiter.check() is Verdict.CLOSE  # the 201st frame at once: 5 x the burst
    # Sending at the limit is served, whatever happened before.
    limiter = ratelimit.for_connection("station", clock)
    for _ in range(100):
        [limiter.check() for _ in range(20)]
        clock.now += 1.0
    assert limiter.refused == 0 and limiter.served == 2000
    # At twice the limit for a long time: half refused, never closed.
    limiter = ratelimit.for_connection("station", clock)
    verdicts = []
    for _ in range(60):
        verdicts += [limiter.check() for _ in range(40)]
        clock.now += 1.0
    assert Verdict.CLOSE not in verdicts
    assert verdicts.count(Verdict.SERVE) == 40 + 59 * 20  # the burst, then the rate


def test_the_limits_come_from_the_settings(settings):
    settings.TABLEHUB_RATE_LIMITS = {"shoe": {"rate": 2, "burst": 3}, "station": {"rate": 0}}
    shoe = ratelimit.for_connection("shoe", Clock())
    assert [shoe.check() for _ in range(4)] == [Verdict.SERVE] * 3 + [Verdict.REFUSE]
    station = ratelimit.for_connection("station", Clock())
    assert isinstance(station, ConnectionLimiter) and station.serve is None
    assert all(station.check() is Verdict.SERVE for _ in range(1000))


async def flood(ws: WebsocketCommunicator, message: dict, frames: int) -> list[dict]:
    """Send ``frames`` copies at once; every output until the connection is closed."""
    for _ in range(frames):
        await ws.send_json_to(message)
    outputs = []
    while True:
        output = await ws.receive_output(timeout=10)
        outputs.append(output)
        if output["type"] == "websocket.close":
            return outputs


async def open_socket(world, kind: str) -> tuple[WebsocketCommunicator, dict]:
    """A socket of ``kind`` past its login, and a cheap message for it to refuse."""
    if kind == "station":
        ws = await connect(f"/ws/tables/{world.pk}/station/")
        return ws, {"type": "state", "client_id": "n"}  # not joined: no database
    if kind == "shoe":
        ws = await connect(f"/ws/tables/{world.pk}/shoe/")
        await ws.send_json_to({"type": "hello", "key": "reader-secret"})
        assert (await ws.receive_json_from())["ok"]
        return ws, {"type": "card", "seq": 0, "card": "9S"}  # bad seq: no database
    headers = await db(session_headers)("dealer")
    ws = WebsocketCommunicator(application, f"/ws/tables/{world.pk}/croupier/", headers=headers)
    assert (await ws.connect())[0]
    await ws.receive_json_from()  # the state
    return ws, {"type": "shuffle", "client_id": "n"}  # unknown, then resent from memory


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["station", "shoe", "tablet"])
async def test_a_flood_is_refused_then_closed_with_4429(world, kind, settings):
    settings.TABLEHUB_RATE_LIMITS = {}  # the defaults: 20 a second, bursts of 40 (reader 100)
    limits = ratelimit.limits(kind)
    burst, cutoff = int(limits["burst"]), int(limits["burst"] * limits["flood"])
    ws, message = await open_socket(world, kind)
    before = await db(snapshot)()
    began = time.monotonic()
    outputs = await flood(ws, message, cutoff + 200)
    # The bucket refills at its rate while the flood is read: at most this many more served.
    refilled = math.ceil(limits["rate"] * (time.monotonic() - began)) + 1
    assert outputs[-1] == {"type": "websocket.close", "code": CLOSE_FLOODING}
    replies = [json.loads(o["text"]) for o in outputs[:-1] if o["type"] == "websocket.send"]
    codes = [r.get("error", {}).get("code") for r in replies if r.get("type") != "event"]
    limited = codes.count("rate_limited")
    served = len(codes) - limited
    burst -= kind == "shoe"  # the reader's hello took a token
    assert burst <= served <= burst + refilled, codes  # and what came back meanwhile
    assert "rate_limited" not in codes[:burst]
    assert limited >= cutoff - burst - 20 and len(codes) < cutoff + 200  # closed before the end
    assert await db(snapshot)() == before
    count("rate limit, flood", cases=1, **{f"{kind} served": served, f"{kind} refused": limited})


@pytest.mark.django_db(transaction=True)
async def test_a_rate_limited_command_does_nothing_and_may_be_sent_again(world, settings):
    settings.TABLEHUB_RATE_LIMITS = {"station": {"rate": 2, "burst": 5, "flood": 100}}
    ws = await join(world, "s1")  # the join takes a token
    for n in range(20):
        await ws.send_json_to({"type": "cash_in", "client_id": f"c{n}", "amount": "1.00"})
    replies = [await next_reply(ws) for _ in range(20)]
    assert [r["client_id"] for r in replies] == [f"c{n}" for n in range(20)]
    served = [r["client_id"] for r in replies if r["ok"]]
    limited = [r["client_id"] for r in replies if not r["ok"]]
    assert {r["error"]["code"] for r in replies if not r["ok"]} == {"rate_limited"}
    assert 4 <= len(served) <= 8 and len(limited) >= 12, replies
    s1 = await db(Station.objects.get)(table=world, name="s1")
    assert await db(ledger.balance)(s1) == Decimal(100 + len(served))
    stored = await db(lambda: set(s1.commands.values_list("client_id", flat=True)))()
    assert stored == {*served}  # a refused message is not kept under its client id
    await asyncio.sleep(0.6)  # a token back
    await ws.send_json_to({"type": "cash_in", "client_id": limited[0], "amount": "1.00"})
    again = await next_reply(ws)
    assert again["ok"] and "resent" not in again
    assert await db(ledger.balance)(s1) == Decimal(101 + len(served))
    assert await db(StationCommand.objects.filter(station=s1).count)() == len(served) + 1
    await ws.disconnect()
