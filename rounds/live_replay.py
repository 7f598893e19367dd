"""``play_scenario --live``: a scenario played through the real table, end to end.

A replay table (``Table.is_replay``, which reports leave out) is configured from the
scenario; the ASGI server runs in this process on 127.0.0.1 (or a running one is used,
``url``); one websocket client per station plays the
station protocol (docs/protocol.md) and one client is the card reader. Each station cashes
in (in seat mode takes its seat and sets its follow choice), places its bets, and answers
every prompt with its next action (``leave``: it leaves its seat); when its list is empty
it sends nothing and the table's timer answers for it. The outcome is read back from the
database (hands, ledger, special bets, the dealer's hand from the event log), never from an
engine in memory. The In For 6 assignment comes from the scenario's ``bonus`` through the
secure RNG's one seam (``payouts.specials.bonus.fixed_bonus``).

Nothing is ever deleted (docs: "Money is a ledger"): the replay's table, rounds and ledger
entries stay in the database it played on. ``play_scenario --live`` without ``url`` plays on
a throwaway database of its own (``throwaway_database``) and removes that database
afterwards; with ``url`` the database is the running server's, and the replay table stays.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connections

from payouts.specials import parse_paytables
from payouts.specials.bonus import fixed_bonus
from rounds import timers, writer
from rounds.engine import EngineError
from rounds.engine.scenario import LEAVE, Scenario, parse_scenario, shoe_exhausted
from rounds.selectors import round_outcome
from stations.models import Station
from tablehub.loopback import free_port, wait_for_port
from tablehub.models import Jurisdiction, Play, Table, TableConfig

_SERVER: dict[str, Any] = {}
REPLAY_LIMIT_SECONDS = 120
REPLAY_DATABASE_PREFIX = "tablehub_replay_"  # a throwaway PostgreSQL database's name


def in_process_server() -> str:
    """Start daphne once in this process (Twisted's reactor cannot be restarted); its URL."""
    if "url" not in _SERVER:
        # Local: daphne installs Twisted's reactor on import, and tablehub.asgi sets Django up.
        from daphne.endpoints import build_endpoint_description_strings
        from daphne.server import Server

        from tablehub.asgi import application
        from tablehub.origins import allow_own

        port = free_port()
        allow_own(f"http://127.0.0.1:{port}")  # its pages open their sockets from there
        server = Server(
            application=application,
            endpoints=build_endpoint_description_strings(host="127.0.0.1", port=port),
            signal_handlers=False,
        )
        threading.Thread(target=server.run, daemon=True, name="live-replay-server").start()
        wait_for_port(port, 30)
        _SERVER["url"] = f"ws://127.0.0.1:{port}"
    return _SERVER["url"]


@contextmanager
def throwaway_database(
    keep: bool = False, say: Callable[[str], object] | None = None
) -> Iterator[str]:
    """Point Django's default database at a new one, migrated, for the rest of this process;
    remove it when the block ends, however it ends, unless ``keep``. Yields where it is, as
    a DATABASE_URL (no password), which ``keep`` also tells ``say``.

    On the embedded default (SQLite) it is a file in a temporary folder, removed with the
    folder; when DATABASE_URL names PostgreSQL it is a database of the same server,
    ``tablehub_replay_<random>``, created and dropped through a connection of its own to the
    configured database (which is never otherwise used). Enter it before anything uses the
    default database: the switch is made in the settings every thread makes its connection
    from, so the in-process server's threads (consumers, timers, sweeps) play on it too.
    Afterwards the settings still name the removed database, on purpose: a timer or sweep of
    the in-process server that wakes up later fails instead of reaching the configured one.
    """
    db = settings.DATABASES[DEFAULT_DB_ALIAS]
    connection = connections[DEFAULT_DB_ALIAS]
    connection.close()
    if connection.vendor == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="tablehub-replay-"))
        db["NAME"] = str(folder / "replay.sqlite3")
        where = f"sqlite:///{db['NAME']}"

        def remove() -> None:
            shutil.rmtree(folder, ignore_errors=True)

    elif connection.vendor == "postgresql":
        name = REPLAY_DATABASE_PREFIX + secrets.token_hex(6)
        # A connection of its own, made from the settings as they are now (the configured
        # database): it outlives the switch, to drop the throwaway database at the end.
        admin = type(connection)({**db, "OPTIONS": dict(db.get("OPTIONS", {}))}, "replay-admin")
        quoted = admin.ops.quote_name(name)
        try:
            with admin.cursor() as cursor:
                cursor.execute(f"CREATE DATABASE {quoted}")
        finally:
            admin.close()
        db["NAME"] = name
        user, host, port = db.get("USER") or "", db.get("HOST") or "", db.get("PORT") or ""
        where = f"postgres://{user}{'@' if user else ''}{host}{':' if port else ''}{port}/{name}"

        def remove() -> None:
            # FORCE ends the connections other threads of this process still hold (the
            # in-process server's); they cannot be closed from this one.
            try:
                with admin.cursor() as cursor:
                    cursor.execute(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")
            finally:
                admin.close()

    else:
        raise ImproperlyConfigured(
            f"play_scenario --live plays on a throwaway SQLite or PostgreSQL database, not "
            f"{connection.vendor}; give --url to play on a running server"
        )
    try:
        call_command("migrate", verbosity=0, interactive=False)
        yield where
    finally:
        timers.stop()  # the replay is over: a timer still due must not touch the database
        connections.close_all()  # this thread's; the server threads' are ended by remove()
        if keep:
            if say is not None:
                say(f"the replay's database is kept: DATABASE_URL={where}")
        else:
            remove()


def play_live(data: object, url: str | None = None, timer_ms: int | None = None) -> dict[str, Any]:
    """Replay a decoded scenario on the real table; the spec's output, or EngineError. The
    replay table and everything played on it stay in the default database."""
    scenario = parse_scenario(data, parse_paytables)  # the same checks as the engine path
    if url is None:
        settings.TABLEHUB_TIMERS = "inprocess"  # our own server keeps the table's time
        url = in_process_server()
    # stderr: one line, or nothing (after the server's start, which configures logging)
    logging.getLogger("tablehub").setLevel(logging.ERROR)
    assert isinstance(data, dict)  # parse_scenario refuses anything else
    table, secrets_by_station = _set_up(data, scenario, timer_ms)
    with fixed_bonus(scenario.bonus):
        return asyncio.run(
            asyncio.wait_for(
                _replay(url, table, scenario, secrets_by_station), REPLAY_LIMIT_SECONDS
            )
        )


def jsonable(value: Any) -> Any:
    """Decimals (JSON numbers read exactly) as strings, for a JSONField."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    return str(value) if isinstance(value, Decimal) else value


def _set_up(data: dict, scenario: Scenario, timer_ms: int | None) -> tuple[Table, dict]:
    tag = secrets.token_hex(4)
    seconds = (timer_ms or 15_000) / 1000
    seating = scenario.seating
    jurisdiction = Jurisdiction.objects.create(
        code=f"replay-{tag}",
        name="Scenario replay",
        max_decision_seconds=max(25, int(seconds)),
        abandoned_hands=scenario.abandoned_hands,  # the table's timer plays them so
        special_bets_behind=sorted(seating.behind_special_bets) if seating else [],
    )
    table = Table.objects.create(
        name=f"replay-{tag}", jurisdiction=jurisdiction, boxes=scenario.boxes, is_replay=True
    )
    table.set_reader_key(tag)
    table.save()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=scenario.rules.to_dict(),
        limits=jsonable(data.get("limits", {})),
        special_bets=jsonable(data.get("special_bets", {})),
        timers={
            "betting": 3600,
            "insurance": seconds,
            "bonus": seconds,
            "play": seconds,
            "decision": seconds,
        },
        play=Play.SEAT if seating else Play.COMMON_DRAW,
        behind_cap=seating.behind_cap if seating else None,
    )
    keys = {}
    for name in scenario.credits:
        station = Station(table=table, name=name)
        keys[name] = secrets.token_hex(8)
        station.set_credential(keys[name])
        station.save()
    keys["__reader__"] = tag
    return table, keys


class StationClient:
    def __init__(self, name: str, ws, actions: list[str]) -> None:
        self.name = name
        self.ws = ws
        self.actions = list(actions)
        self.error: dict | None = None
        self.replies: asyncio.Queue = asyncio.Queue()
        self.croupier: asyncio.Queue | None = None
        self.sent = 0

    async def request(self, message: dict) -> dict:
        self.sent += 1
        message = {"client_id": f"{self.name}-{self.sent}", **message}
        await self.ws.send(json.dumps(message))
        reply = await self.replies.get()
        if not reply["ok"]:
            raise EngineError(f"{reply['error']['message']} [{reply['error']['code']}]")
        return reply

    async def listen(self) -> None:
        """Answer each question as it opens; keep replies for ``request``."""
        async for text in self.ws:
            frame = json.loads(text)
            if frame.get("type") == "reply":
                if frame.get("client_id", "").startswith(f"{self.name}-answer"):
                    if not frame["ok"]:
                        self.error = frame["error"]
                    continue
                self.replies.put_nowait(frame)
                continue
            event = frame.get("event", {})
            if self.croupier is not None and event.get("type") in ("dealer", "round_over"):
                self.croupier.put_nowait(event)
            if event.get("type") != "prompt" or event.get("prompt") is None:
                continue
            if event["prompt"]["kind"] == "bonus_pick":
                action = "pick_1"  # the scenario's bonus is behind pick_1 (the seam)
            elif self.actions:
                action = self.actions.pop(0)
            else:
                continue  # nothing to say: the timer answers
            self.sent += 1
            answer = {"type": "decide", "action": action}
            if action == LEAVE:  # the player gets up: the table answers for the seat
                answer = {"type": "leave_seat"}
            await self.ws.send(
                json.dumps(answer | {"client_id": f"{self.name}-answer-{self.sent}"})
            )


async def _replay(url: str, table: Table, scenario: Scenario, keys: dict) -> dict[str, Any]:
    import websockets  # local: needed only to replay live (a main dependency, pyproject.toml)
    from websockets.typing import Origin

    base = f"{url}/ws/tables/{table.pk}"
    origin = Origin("http://127.0.0.1")
    clients: dict[str, StationClient] = {}
    listeners = []
    croupier: asyncio.Queue = asyncio.Queue()
    try:
        for name, credits in scenario.credits.items():
            ws = await websockets.connect(f"{base}/station/", origin=origin)
            client = StationClient(name, ws, scenario.actions[name])
            await ws.send(
                json.dumps(
                    {"type": "join", "client_id": "join", "station": name, "credential": keys[name]}
                )
            )
            joined = json.loads(await ws.recv())
            if not joined["ok"]:
                raise EngineError(f"station {name}: {joined['error']['message']}")
            if not clients:
                client.croupier = croupier  # public dealer events reach the reader from here
            listeners.append(asyncio.create_task(client.listen()))
            clients[name] = client
            if credits > 0:
                await client.request({"type": "cash_in", "amount": str(credits)})
        seating = scenario.seating
        for box, name in sorted(seating.seats.items()) if seating else ():
            await clients[name].request({"type": "take_seat", "box": box})
        for name in sorted(seating.follow) if seating else ():
            await clients[name].request({"type": "set_follow", "follow": True})
        round = await sync_to_async(writer.open_round)(table)
        for name, client in clients.items():  # each station's bets as one group
            bets = [
                {"box": b.box, "bet": b.code, "amount": str(b.stake)}
                for b in scenario.bets
                if b.station == name
            ]
            if bets:
                await client.request({"type": "place_many", "bets": bets})
        await sync_to_async(writer.close_bets)(round.pk)

        shoe = await websockets.connect(f"{base}/shoe/", origin=origin)
        await shoe.send(json.dumps({"type": "hello", "key": keys["__reader__"]}))
        json.loads(await shoe.recv())
        cards = iter(scenario.shoe)
        used = 0

        async def scan(burn: bool, target: str) -> None:
            nonlocal used
            card = next(cards, None)
            if card is None:
                state = await sync_to_async(writer.state)(round.pk)
                raise shoe_exhausted(state, target)
            used += 1
            await shoe.send(
                json.dumps({"type": "card", "seq": used, "card": str(card), "burn": burn})
            )
            reply = json.loads(await shoe.recv())
            if not reply["ok"]:
                raise EngineError(f"{reply['error']['message']} [{reply['error']['code']}]")

        for _ in range(scenario.burn):
            await scan(True, "burn")
        # The table says when it wants a card: the reader scans exactly then, no polling.
        while True:
            for client in clients.values():
                if client.error is not None:
                    raise EngineError(f"{client.error['message']} [{client.error['code']}]")
            try:
                event = await asyncio.wait_for(croupier.get(), 0.2)
            except TimeoutError:
                continue
            if event["type"] == "round_over":
                break
            await scan(False, event["card_for"])
        await shoe.close()

        def read_back() -> dict[str, Any]:
            round.refresh_from_db()
            stations = [table.stations.get(name=name) for name in scenario.credits]
            outcome = round_outcome(round, stations)
            outcome["unused"] = [str(c) for c in scenario.shoe[used:]]
            return outcome

        return await sync_to_async(read_back)()
    finally:
        for task in listeners:
            task.cancel()
        for client in clients.values():
            await client.ws.close()
