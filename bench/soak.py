"""Soak: many rounds at a video table with many stations over real websockets, then the books.

    .venv/bin/python bench/soak.py [--rounds 1000] [--stations 100] [--seed N]

Starts daphne on 127.0.0.1 (embedded default: a fresh SQLite file and the in-memory channel
layer; DATABASE_URL / REDIS_URL when they are set) with its own in-process timers, sets up a
video-mode table (the virtual shoe deals by itself; short timers), connects the stations
and a croupier tablet, opens the table and lets it run until ``--rounds`` rounds are
settled. Each round about ``--play`` of the stations bet, at random: single chips, chip
groups with special bets, bet all, rebet, repeat, double, let it play, undo and clear, now
and then a bet the table must refuse (over the limit, below it, more decimals than cents,
an unknown code), a message resent with its client id, a cash in or out. Every question is
answered with one of the answers it allows, except by the stations that stay silent
(``--silent``) and leave it to the timer. Stations drop their connection at random
(``--drops``), come back a moment later, join again and carry on from the state they get.
The tablet closes bets once every connected station has placed its bets (or the betting
timer does).

Then the checks, from the database: the ledger balances (every movement has its house side;
the house against every station), each station's credits (its final state over the socket)
are the sum of its ledger entries, and every settled round's event log replays through the
rules engine to the hands, special bets and ledger entries stored for it (and its game
recall reads without a replay error). It prints the figures (rounds/s, messages, refusals
by code, timeouts, reconnects, checks); the exit status is 1 when a check failed. With
``--json`` the last line is the figures as JSON (tests/fuzz/test_soak_small.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.loopback import start_daphne  # noqa: E402
from tablehub.loopback import free_port, wait_for_port  # noqa: E402

ORIGIN = "http://127.0.0.1"
SPECIALS = ("21+3", "pair", "lucky_ladies", "bust", "in_for_6")
CHIPS = ("1", "5", "25", "100")
# Refusals a well-behaved station meets at a busy table (late, broke, nothing to repeat, a
# question already answered by its timer) and the ones its deliberate mistakes earn (its
# special bets' stakes are drawn apart from the main bet's: a bust bet may exceed it).
EXPECTED = {
    "bets_closed", "no_bets", "insufficient_credits", "not_your_turn", "too_late",
    "bets_on_table", "above_maximum", "below_minimum", "bad_amount", "invalid", "not_allowed",
    "round_over", "rate_limited", "bust_above_main", "special_above_main",
}  # fmt: skip


# --- the server and the table ----------------------------------------------------------------


def environment(workdir: Path) -> dict[str, str]:
    """The server's environment: its own timers; a fresh SQLite file unless DATABASE_URL."""
    env = {
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
        "TABLEHUB_TIMERS": "inprocess",
        "DEBUG": "false",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "soak-only"),
        "ALLOWED_ORIGINS": ORIGIN,  # the loopback clients' origin (plain http, no TLS)
    }
    if "DATABASE_URL" not in os.environ:
        env["DATABASE_URL"] = f"sqlite:///{workdir / 'soak.sqlite3'}"
    os.environ.update(env)
    server_env = dict(os.environ)
    os.environ["TABLEHUB_TIMERS"] = "none"  # this process sets up and checks, never times
    return server_env


def set_up(args) -> dict:
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client

    from payouts.specials.defaults import default_paytable_rows
    from rounds.engine import RuleSet
    from stations.models import Station
    from stations.services import cash_in
    from tablehub import roles
    from tablehub.models import Jurisdiction, Table, TableConfig

    call_command("migrate", verbosity=0)
    tag = f"{int(time.time())}-{random.randrange(10**6)}"
    jurisdiction = Jurisdiction.objects.create(code=f"soak-{tag}", name="Soak")
    table = Table.objects.create(
        name=f"soak-{tag}", jurisdiction=jurisdiction, mode=Table.Mode.VIDEO
    )
    defaults = default_paytable_rows()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        limits={"main": ["1", "500"], "special": ["1", "100"], "let_it_play": ["0", "1000"]},
        timers={
            "betting": args.betting,
            "insurance": args.decision,
            "bonus": args.decision,
            "decision": args.decision,
            "video_card": 0,
        },
        special_bets={code: defaults[code]["pays"] for code in SPECIALS},
        chips=list(CHIPS),
    )
    names = [f"st{n:03d}" for n in range(args.stations)]
    for name in names:
        station = Station(table=table, name=name)
        station.set_credential(f"{name}-{tag}")
        station.save()
        cash_in(station, "1000", key="soak-start")
    dealer = User.objects.create_user(f"soak-dealer-{tag}")
    dealer.groups.add(Group.objects.get_or_create(name=roles.DEALER)[0])
    table.staff.add(dealer)  # a dealer opens only the tablets of their tables
    client = Client()
    client.force_login(dealer)
    return {
        "table": table.pk,
        "names": names,
        "secrets": {name: f"{name}-{tag}" for name in names},
        "session": client.cookies["sessionid"].value,
    }


# --- the clients -----------------------------------------------------------------------------


class Closed(Exception):
    pass


class Socket:
    """One websocket: requests with their replies, events to a callback."""

    def __init__(self, soak: Soak, on_event, prefix: str) -> None:
        self.soak = soak
        self.on_event = on_event
        self.prefix = prefix
        self.sent = 0
        self.pending: dict[str, asyncio.Future] = {}
        self.ws: ClientConnection | None = None
        self.reader: asyncio.Task | None = None

    async def open(self, path: str, headers=None) -> None:
        import websockets
        from websockets.typing import Origin

        self.ws = await websockets.connect(
            f"{self.soak.url}{path}",
            origin=Origin(ORIGIN),
            additional_headers=headers,
            max_queue=None,
            ping_interval=None,
            open_timeout=60,
        )
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.ws is not None  # started by open()
        try:
            async for text in self.ws:
                frame = json.loads(text)
                self.soak.frames += 1
                if frame.get("type") == "reply":
                    future = self.pending.pop(frame.get("client_id"), None)
                    if future is not None and not future.done():
                        future.set_result(frame)
                    continue
                self.on_event(frame)
        except Exception:  # the connection dropped: every open request fails
            pass
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(Closed())
            self.pending.clear()

    async def request(self, message: dict, client_id: str | None = None) -> dict:
        if client_id is None:
            self.sent += 1
            client_id = f"{self.prefix}-{self.sent}"
        from websockets.exceptions import ConnectionClosed

        assert self.ws is not None, "open() first"
        future = asyncio.get_running_loop().create_future()
        self.pending[client_id] = future
        try:
            await self.ws.send(json.dumps({**message, "client_id": client_id}))
        except ConnectionClosed:
            self.pending.pop(client_id, None)
            if future.done():  # failed by the reader meanwhile: retrieved, not logged
                future.exception()
            raise Closed() from None
        self.soak.messages += 1
        reply = await asyncio.wait_for(future, 120)
        self.soak.tally(message.get("type"), reply)
        return reply

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


class Player:
    """A station: bets at random when a round opens, answers its questions (or not)."""

    def __init__(self, soak: Soak, name: str, secret: str, rng: random.Random) -> None:
        self.soak = soak
        self.name = name
        self.secret = secret
        self.rng = rng
        self._socket: Socket | None = None
        self.connected = False
        self.credits = Decimal(0)
        self.tasks: set[asyncio.Task] = set()
        self.generation = 0

    def spawn(self, coroutine) -> None:
        task = asyncio.create_task(self._guard(coroutine))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _guard(self, coroutine) -> None:
        try:
            await coroutine
        except Closed:
            pass  # dropped meanwhile: the reconnect carries on
        except Exception as exc:  # a bug of the soak or the server: counted, shown at the end
            self.soak.failures.append(f"{self.name}: {type(exc).__name__}: {exc}")

    @property
    def socket(self) -> Socket:
        """The station's websocket, made by connect()."""
        assert self._socket is not None, "connect() first"
        return self._socket

    async def connect(self) -> None:
        self.generation += 1
        self._socket = Socket(self.soak, self.on_event, f"{self.name}-g{self.generation}")
        await self.socket.open(f"/ws/tables/{self.soak.table}/station/")
        reply = await self.socket.request(
            {"type": "join", "station": self.name, "credential": self.secret}
        )
        if not reply["ok"]:
            raise RuntimeError(f"{self.name} could not join: {reply['error']}")
        self.connected = True
        self.carry_on(reply["state"])

    def carry_on(self, state: dict) -> None:
        """After a (re)join: bet if bets are open and it has none, answer an open question."""
        self.credits = Decimal(state["credits"])
        round = state.get("round") or {}
        if round.get("phase") == "betting" and not state.get("bets"):
            self.spawn(self.bet(round["id"]))
        prompt = (state.get("table") or {}).get("station", {}).get("prompt")
        if prompt:
            self.spawn(self.answer(prompt))

    def on_event(self, frame: dict) -> None:
        event = frame.get("event") or {}
        kind = event.get("type")
        if kind == "phase" and event.get("phase") == "betting":
            self.spawn(self.bet(frame["round"]))
        elif kind == "prompt" and event.get("prompt"):
            self.spawn(self.answer(event["prompt"]))
        elif kind == "settlement":
            self.soak.settlements += 1
            self.credits = Decimal(event["credits"])
        if kind == "phase" and self.rng.random() < self.soak.args.drops:
            self.spawn(self.drop())

    async def answer(self, prompt: dict) -> None:
        if self.rng.random() < self.soak.args.silent:
            self.soak.silent += 1
            return  # the timer answers
        await asyncio.sleep(self.rng.random() * 0.2)
        message = {"type": "decide", "action": self.rng.choice(prompt["allowed"])}
        if prompt.get("hand"):
            message["hand"] = prompt["hand"]
        reply = await self.socket.request(message)
        if reply["ok"]:
            self.soak.decisions += 1

    async def bet(self, round_id: int) -> None:
        try:
            if self.rng.random() < self.soak.args.play:
                await self._bet()
        finally:
            self.soak.done_betting(round_id, self.name)

    async def _bet(self) -> None:
        rng, request = self.rng, self.socket.request
        if self.credits < 200:
            reply = await request({"type": "cash_in", "amount": "1000.00"})
            self.credits = Decimal(reply["state"]["credits"]) if reply["ok"] else self.credits
        box = rng.randint(1, 3)
        chip = rng.choice(CHIPS)
        roll = rng.random()
        if roll < 0.35:
            message = {"type": "place", "box": box, "bet": "main", "amount": chip}
        elif roll < 0.55:
            specials = rng.sample(SPECIALS, rng.randint(1, 2))
            bets = [{"box": box, "bet": "main", "amount": chip}]
            bets += [
                {"box": box, "bet": code, "amount": rng.choice(CHIPS[:2])} for code in specials
            ]
            rng.shuffle(bets)  # a bust bet may come before the main bet that covers it
            message = {"type": "place_many", "bets": bets}
        elif roll < 0.62:
            message = {"type": "bet_all", "box": box, "amount": "1"}
        elif roll < 0.72:
            message = {"type": "rebet"}
        elif roll < 0.77:
            message = {"type": "let_it_play", "box": box}
        elif roll < 0.85:
            mistake = rng.choice(["10000", "0.50", "1.005", "-5", "1e30"])
            message = {"type": "place", "box": box, "bet": rng.choice(["main", "kk"]),
                       "amount": mistake}  # fmt: skip
        elif roll < 0.9:
            await request({"type": "place", "box": box, "amount": chip})
            message = {"type": rng.choice(["undo", "clear", "double_bets", "repeat_last"])}
        elif roll < 0.93:
            reply = await request({"type": "cash_out"})
            self.soak.cash_outs += reply["ok"]
            message = {"type": "cash_in", "amount": "1000.00"}
        else:
            message = {"type": "place", "box": box, "amount": chip}
        reply = await request(message)
        if rng.random() < 0.05:  # sent again with the same client id: the stored reply
            client_id = reply["client_id"]
            again = await self.socket.request(message, client_id=client_id)
            if again != reply | {"resent": True}:
                self.soak.failures.append(f"{self.name}: resent {client_id} got {again}")
            self.soak.resent += 1
        if rng.random() < 0.5 and not reply["ok"]:
            await request({"type": "place", "box": box, "amount": chip})

    async def drop(self) -> None:
        """Lose the connection at some moment of the round, come back a little later."""
        await asyncio.sleep(self.rng.random() * 2)
        if not self.connected:
            return
        self.connected = False
        self.soak.drops += 1
        await self.socket.close()
        await asyncio.sleep(0.2 + self.rng.random() * 2.5)
        await self.connect()
        self.soak.reconnects += 1

    async def final_state(self) -> dict:
        reply = await self.socket.request({"type": "state"})
        return reply["state"]


class Soak:
    def __init__(self, args, url: str, table: int, names, secrets, session: str) -> None:
        self.args = args
        self.url = url
        self.table = table
        self.session = session
        rng = random.Random(args.seed)
        self.players = [Player(self, n, secrets[n], random.Random(rng.random())) for n in names]
        self.codes: Counter = Counter()
        self.failures: list[str] = []
        self.messages = self.frames = self.settlements = self.decisions = 0
        self.silent = self.drops = self.reconnects = self.resent = self.cash_outs = 0
        self.rounds_over = 0
        self.closed_by_tablet = 0
        self.betting: dict[int, set[str]] = {}
        self.betting_done: dict[int, asyncio.Event] = {}
        self.over = asyncio.Event()
        self.tablet = Socket(self, self.on_tablet_event, "tablet")
        self.final: dict[str, dict[str, Any]] | None = None  # each station's state at the end

    def tally(self, kind, reply: dict) -> None:
        if reply.get("ok"):
            self.codes["ok"] += 1
            return
        code = reply.get("error", {}).get("code")
        self.codes[code] += 1
        if code not in EXPECTED:
            self.failures.append(f"{kind}: unexpected refusal {reply.get('error')}")

    def done_betting(self, round_id: int, name: str) -> None:
        done = self.betting.setdefault(round_id, set())
        done.add(name)
        connected = {p.name for p in self.players if p.connected}
        if connected <= done:
            self.betting_done.setdefault(round_id, asyncio.Event()).set()

    def on_tablet_event(self, frame: dict) -> None:
        event = frame.get("event") or {}
        if event.get("type") == "phase" and event.get("phase") == "betting":
            asyncio.create_task(self.close_bets_when_ready(frame["round"]))
        elif event.get("type") == "round_over":
            self.rounds_over += 1
            if self.rounds_over >= self.args.rounds:
                self.over.set()
            elif self.rounds_over % max(1, self.args.rounds // 20) == 0:
                print(f"  {self.rounds_over} rounds", flush=True)

    async def close_bets_when_ready(self, round_id: int) -> None:
        """The tablet closes bets once every connected station has bet, or after the betting
        time (when the timer may have closed them already). Nobody bet: bets stay open and
        the stations are asked again."""
        while not self.over.is_set():
            ready = self.betting_done.setdefault(round_id, asyncio.Event())
            try:
                await asyncio.wait_for(ready.wait(), self.args.betting)
            except TimeoutError:
                pass
            try:
                reply = await self.tablet.request({"type": "close_bets"})
            except Closed:
                return
            if reply["ok"]:
                self.closed_by_tablet += 1
            if reply["ok"] or reply["error"]["code"] != "no_bets":
                return
            self.betting_done[round_id] = asyncio.Event()
            self.betting[round_id] = set()
            for player in self.players:
                if player.connected:
                    player.spawn(player.bet(round_id))

    async def run(self) -> float:
        await self.tablet.open(
            f"/ws/tables/{self.table}/croupier/",
            headers={"Cookie": f"sessionid={self.session}"},
        )
        for player in self.players:
            await player.connect()
        start = time.perf_counter()
        await self.tablet.request({"type": "open_table"})
        await asyncio.wait_for(self.over.wait(), self.args.timeout)
        elapsed = time.perf_counter() - start
        await self.tablet.request({"type": "close_table"})
        await self.quiet()
        self.final = {}
        for player in self.players:
            if not player.connected:
                await player.connect()
            self.final[player.name] = await player.final_state()
        for player in self.players:
            for task in list(player.tasks):
                task.cancel()
            await player.socket.close()
        await self.tablet.close()
        return elapsed

    async def quiet(self) -> None:
        """Wait (bounded) until the last round is over and nobody is left waiting."""
        from asgiref.sync import sync_to_async

        from rounds.models import Round

        def open_rounds() -> int:
            return (
                Round.objects.filter(table_id=self.table)
                .exclude(phase__in=["settled", "void"])
                .count()
            )

        for _ in range(600):
            if not await sync_to_async(open_rounds)():
                break
            await asyncio.sleep(0.1)
        else:
            self.failures.append("a round was still open a minute after the table closed")
        await asyncio.sleep(0.5)
        pending = [t for p in self.players for t in p.tasks]
        if pending:
            await asyncio.wait(pending, timeout=30)


# --- the checks ------------------------------------------------------------------------------


def check_books(table_id: int, final: dict[str, dict]) -> tuple[dict, list[str]]:
    """The ledger, every station's credits and every round's replay (the module docstring)."""
    from django.db.models import Sum

    from payouts.models import LedgerEntry
    from rounds.models import Round, RoundEvent
    from rounds.recall import recall
    from rounds.replay import rebuild
    from stations.models import Station

    problems: list[str] = []
    figures: Counter = Counter()
    stations = {s.name: s for s in Station.objects.filter(table_id=table_id)}
    entries = LedgerEntry.objects.filter(station__in=stations.values())
    keys = list(entries.values_list("key", "amount"))
    house = dict(
        LedgerEntry.objects.filter(key__in=[k + "|house" for k, _ in keys]).values_list(
            "key", "amount"
        )
    )
    for key, amount in keys:
        if house.get(key + "|house") != -amount:
            problems.append(f"ledger entry {key}: no house side of {-amount}")
    figures["ledger entries"] = len(keys) * 2
    stations_total = entries.aggregate(t=Sum("amount"))["t"] or Decimal(0)
    house_total = sum(house.values(), Decimal(0))
    if stations_total + house_total != 0:
        problems.append(f"the ledger does not balance: {stations_total} + {house_total}")
    figures["ledger balanced"] = 1

    for name, station in stations.items():
        total = (entries.filter(station=station).aggregate(t=Sum("amount"))["t"] or 0) + 0
        if Decimal(final[name]["credits"]) != Decimal(total).quantize(Decimal("0.01")):
            problems.append(f"{name}: credits {final[name]['credits']} but entries sum {total}")
        else:
            figures["stations whose credits are their entries"] += 1

    rounds = Round.objects.filter(table_id=table_id).order_by("pk")
    for round in rounds:
        figures[f"rounds {round.phase}"] += 1
        if round.phase == Round.Phase.VOID:
            net = LedgerEntry.objects.filter(round=round, station__isnull=False).aggregate(
                t=Sum("amount")
            )["t"]
            if net:
                problems.append(f"void round {round.pk}: stations net {net}, not 0")
            continue
        if round.phase != Round.Phase.SETTLED:
            problems.append(f"round {round.pk} left in {round.phase}")
            continue
        problems += check_round(round, stations, rebuild, recall, LedgerEntry)
        figures["rounds replayed to what is stored"] += 1
    figures["timeouts"] = RoundEvent.objects.filter(
        round__table_id=table_id, kind="timeout"
    ).count()
    return dict(figures), problems


def check_round(round, stations, rebuild, recall, LedgerEntry) -> list[str]:
    """The round's event log replayed through the engine gives what is stored for it."""
    problems = []
    where = f"round {round.pk}"
    engine = rebuild(round)
    if not engine.settled:
        return [f"{where}: the replay does not end settled"]
    stored_hands: dict[str, list[tuple[Any, ...]]] = {}
    for hand in round.hands.select_related("station").order_by("station__name", "position"):
        stored_hands.setdefault(hand.station.name, []).append(
            (hand.box, hand.cards, hand.stake, hand.result, hand.returned, hand.insurance,
             hand.insurance_returned)
        )  # fmt: skip
    stored_specials = {}
    for bet in round.bets.select_related("station").exclude(code="main"):
        stored_specials[(bet.station.name, bet.box, bet.code)] = (
            bet.returned or Decimal(0),
            bet.combination or "",
        )
    stored_ledger = {
        e.key: e.amount for e in LedgerEntry.objects.filter(round=round, station__isnull=False)
    }
    replayed_ledger = {}
    for name, seat in engine.seats.items():
        replayed = [
            (h.box, [str(c) for c in h.cards], h.stake, h.result, h.returned, h.insurance,
             h.insurance_returned if h.insurance else None)
            for h in seat.hands
        ]  # fmt: skip
        if replayed != stored_hands.get(name, []):
            problems.append(f"{where} {name}: hands {stored_hands.get(name)} != {replayed}")
        for special in seat.specials:
            got = stored_specials.get((name, special.box, special.code))
            want = (special.returned, special.combination or "")
            if got != want:
                problems.append(f"{where} {name} {special.code}: {got} != {want}")
        for item, amount in engine.money_items(name).items():
            replayed_ledger[f"round:{round.pk}:{name}:{item}"] = amount
    if stored_ledger != replayed_ledger:
        diff = set(stored_ledger.items()) ^ set(replayed_ledger.items())
        problems.append(f"{where}: ledger differs from the replay: {sorted(diff)[:4]}")
    record = recall(round)
    errors = [e["replay_error"] for e in record["events"] if "replay_error" in e]
    if errors:
        problems.append(f"{where}: recall replay errors {errors}")
    staked = -sum((a for a in stored_ledger.values() if a < 0), Decimal(0))
    if record["ledger"]["staked"] != f"{staked:.2f}":
        problems.append(f"{where}: recall staked {record['ledger']['staked']} != {staked}")
    if record["dealer"] != engine.dealer_outcome():
        problems.append(f"{where}: recall dealer {record['dealer']}")
    return problems


# --- main ------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000, help="settled rounds to play")
    parser.add_argument("--stations", type=int, default=100)
    parser.add_argument("--play", type=float, default=0.35, help="share betting each round")
    parser.add_argument("--silent", type=float, default=0.01, help="share of unanswered questions")
    parser.add_argument("--drops", type=float, default=0.003, help="drops per station per phase")
    parser.add_argument("--betting", type=float, default=3.0, help="betting timer, seconds")
    parser.add_argument("--decision", type=float, default=1.0, help="question timers, seconds")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=None, help="seconds (default: 20/round)")
    parser.add_argument("--json", action="store_true", help="the figures as JSON, last line")
    args = parser.parse_args(argv)
    args.seed = args.seed if args.seed is not None else random.randrange(10**9)
    args.timeout = args.timeout or 60 + 20 * args.rounds

    workdir = Path(tempfile.mkdtemp(prefix="tablehub-soak-"))
    env = environment(workdir)
    started = time.perf_counter()
    setup = set_up(args)
    port = free_port()
    server = start_daphne(port, env)
    try:
        wait_for_port(port, process=server)
        soak = Soak(
            args,
            f"ws://127.0.0.1:{port}",
            setup["table"],
            setup["names"],
            setup["secrets"],
            setup["session"],
        )
        try:
            elapsed = asyncio.run(soak.run())
        except TimeoutError:
            soak.failures.append(f"not {args.rounds} rounds within {args.timeout:.0f} s")
            elapsed = float("nan")
            soak.final = None
    finally:
        server.terminate()
        try:
            server.wait(10)
        except Exception:
            server.kill()
    if soak.final is not None:
        figures, problems = check_books(setup["table"], soak.final)
    else:
        figures, problems = {}, []
    problems = soak.failures + problems
    layer = "Redis" if os.environ.get("REDIS_URL") else "in-memory"
    database = os.environ["DATABASE_URL"].split(":", 1)[0]
    rounds = figures.get("rounds settled", 0)
    result = {
        "rounds": rounds,
        "stations": args.stations,
        "seconds": round(elapsed, 1),
        "rounds_per_second": round(rounds / elapsed, 3) if elapsed == elapsed else None,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "messages": soak.messages,
        "frames_received": soak.frames,
        "replies": dict(soak.codes),
        "decisions": soak.decisions,
        "silent": soak.silent,
        "settlements": soak.settlements,
        "drops": soak.drops,
        "reconnects": soak.reconnects,
        "resent": soak.resent,
        "closed_by_tablet": soak.closed_by_tablet,
        "checks": figures,
        "problems": problems[:20],
        "problem_count": len(problems),
        "seed": args.seed,
    }
    print(
        f"soak: {rounds} rounds x {args.stations} stations ({database}, {layer} channel layer,"
        f" seed {args.seed})"
    )
    print(f"  {elapsed:.1f} s, {result['rounds_per_second']} rounds/s")
    print(
        f"  {soak.messages} messages sent, {soak.frames} frames received, "
        f"{soak.decisions} decisions, {soak.silent} questions left to the timer, "
        f"{figures.get('timeouts', 0)} timeouts"
    )
    print(f"  {soak.drops} drops, {soak.reconnects} reconnects, {soak.resent} resent messages")
    print(f"  replies: {dict(sorted(soak.codes.items(), key=lambda kv: -kv[1]))}")
    for name, value in sorted(figures.items()):
        print(f"  check: {name}: {value}")
    print(f"  problems: {len(problems)}")
    for problem in problems[:20]:
        print(f"    {problem}")
    if args.json:
        print(json.dumps(result))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
