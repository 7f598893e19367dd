"""The protocol document is a contract (docs/protocol.md, docs/protocol.schema.json):

* every frame the server sends the stations and the card reader during a scripted round
  (bets, the In For 6 bonus, insurance and even money, decisions, a dispute, settlement, a
  void, and refusals of many codes) is valid against the schema, whose server objects allow
  no field it does not list; every message the test sends is valid against it too;
* every error code the code can produce is in the schema and in docs/protocol.md (or, for
  the croupier tablet, docs/croupier.md), and every documented code is produced somewhere;
* the message and event types of docs/protocol.md are those of the schema.

So a change of the document without the behaviour, or of the behaviour without the
document, fails here.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.utils import timezone

from payouts.specials.defaults import default_paytable_rows
from rounds import disputes, voids, writer
from rounds.engine import RuleSet
from rounds.models import Round
from stations.models import Station
from stations.services import cash_in
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.fuzz.support import documented_codes
from tests.helpers import drain, parse_source

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "protocol.schema.json").read_text())
DOC = (ROOT / "docs" / "protocol.md").read_text()
ORIGIN = [(b"origin", b"http://127.0.0.1")]


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = {"$ref": f"#/$defs/{name}", "$defs": SCHEMA["$defs"]}
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


STATION_FRAME = validator("station_frame")
READER_FRAME = validator("reader_frame")
STATION_MESSAGE = validator("station_message")
READER_MESSAGE = validator("reader_message")


def schema_enum(name: str) -> set[str]:
    return set(SCHEMA["$defs"][name]["enum"])


def schema_types(name: str) -> set[str]:
    return set(SCHEMA["$defs"][name]["properties"]["type"]["enum"])


def assert_valid(check: jsonschema.Draft202012Validator, frame: object) -> None:
    errors = sorted(check.iter_errors(frame), key=lambda e: e.path)
    if errors:
        # oneOf reports every branch; the deepest error says what is wrong
        best = jsonschema.exceptions.best_match(errors)
        raise AssertionError(f"{json.dumps(frame)[:600]}\n-> {best.message} at {list(best.path)}")


# -- the scripted round --------------------------------------------------------------------


@pytest.fixture(autouse=True)
async def _close_the_consumers_connection():
    yield
    # Plain sync_to_async: channels' database_sync_to_async first checks the thread's old
    # connections, which a test without database access may not touch.
    await sync_to_async(connections.close_all)()


@pytest.fixture
def table(transactional_db):
    jurisdiction = Jurisdiction.objects.create(
        code="wa", name="Washington", disputes_allowed=True, dispute_window_seconds=60
    )
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction, boxes=3)
    table.set_reader_key("reader-secret")
    table.save()
    rows = default_paytable_rows()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=8).to_dict(),
        limits={"main": ["1", "100"], "special": ["1", "50"], "let_it_play": ["1", "500"]},
        timers={"betting": 600, "insurance": 600, "bonus": 600, "play": 600},
        special_bets={code: rows[code]["pays"] for code in ("21+3", "pair", "in_for_6")},
    )
    for name in ("s1", "s2"):
        station = Station(table=table, name=name)
        station.set_credential(f"{name}-secret")
        station.save()
        cash_in(station, "100", key="start")
    return table


class Socket:
    """A websocket of the test: every frame it gets is kept (and checked at the end), every
    message it sends is checked against the schema unless it is meant to be malformed."""

    def __init__(self, ws: WebsocketCommunicator, sends: jsonschema.Draft202012Validator):
        self.ws, self.sends = ws, sends
        self.frames: list[dict] = []

    @classmethod
    async def open(cls, path: str, sends: jsonschema.Draft202012Validator) -> Socket:
        ws = WebsocketCommunicator(application, path, headers=ORIGIN)
        connected, _ = await ws.connect()
        assert connected
        return cls(ws, sends)

    async def ask(self, message: object, valid: bool = True) -> dict:
        """Send ``message`` and return the first reply-like frame after it (events before
        and after it are kept)."""
        if valid:
            assert_valid(self.sends, message)
        if isinstance(message, str):
            await self.ws.send_to(text_data=message)
        else:
            await self.ws.send_json_to(message)
        while True:
            frame = await self.ws.receive_json_from(timeout=10)
            self.frames.append(frame)
            if frame.get("type") not in ("event", "changed", "reader_error"):  # notices
                await drain(self.ws, self.frames, 0.05)
                return frame

    async def settle(self) -> None:
        await drain(self.ws, self.frames, 0.1)

    def events(self, kind: str) -> list[dict]:
        return [f["event"] for f in self.frames if f.get("type") == "event"
                and f["event"]["type"] == kind]  # fmt: skip


async def join(table: Table, name: str) -> Socket:
    s = await Socket.open(f"/ws/tables/{table.pk}/station/", STATION_MESSAGE)
    reply = await s.ask(
        {"type": "join", "client_id": "j", "station": name, "credential": f"{name}-secret"}
    )
    assert reply["ok"], reply
    return s


def code(reply: dict) -> str:
    assert reply["ok"] is False, reply
    return reply["error"]["code"]


@pytest.mark.django_db(transaction=True)
async def test_every_frame_of_a_scripted_round_is_valid_against_the_schema(table):
    db = database_sync_to_async
    codes: Counter = Counter()

    # -- the door and joining
    s1 = await Socket.open(f"/ws/tables/{table.pk}/station/", STATION_MESSAGE)
    assert (await s1.ask({"type": "ping", "client_id": "p"}))["server_time"]
    codes[code(await s1.ask("{not json", valid=False))] += 1
    codes[code(await s1.ask([1, 2], valid=False))] += 1
    codes[code(await s1.ask({"type": "state", "client_id": "x"}))] += 1
    codes[code(await s1.ask({"type": "join", "client_id": "j", "station": "s1",
                             "credential": "wrong"}))] += 1  # fmt: skip
    joined = await s1.ask(
        {"type": "join", "client_id": "j", "station": "s1", "credential": "s1-secret"}
    )
    assert joined["ok"] and joined["state"]["info"]["paytables"]["pair"]
    s2 = await join(table, "s2")

    # -- betting, and its refusals
    round = await db(writer.open_round)(table)
    refusals = [
        ({"type": "place", "client_id": "r1", "box": 1, "amount": 10}, "bad_amount"),
        ({"type": "cash_in", "client_id": "r2", "amount": "-1"}, "bad_amount"),
        ({"type": "place", "client_id": "r3", "box": 7, "amount": "10"}, "invalid"),
        ({"type": "place", "client_id": "r4", "box": 1, "bet": "zz", "amount": "5"}, "unknown_bet"),
        ({"type": "place", "client_id": "r5", "box": 1, "bet": "lucky_ladies", "amount": "5"},
         "special_not_offered"),
        ({"type": "place", "client_id": "r6", "box": 1, "bet": "pair", "amount": "5"},
         "special_needs_main"),
        ({"type": "place", "client_id": "r7", "box": 1, "amount": "0.50"}, "below_minimum"),
        ({"type": "place", "client_id": "r8", "box": 1, "amount": "200"}, "above_maximum"),
        ({"type": "place_many", "client_id": "r9", "bets": [
            {"box": 1, "amount": "60"}, {"box": 2, "amount": "60"}]}, "insufficient_credits"),
        ({"type": "repeat_last", "client_id": "r10"}, "no_bets"),
        ({"type": "let_it_play", "client_id": "r11", "box": 1}, "no_bets"),
        ({"type": "decide", "client_id": "r12", "action": "hit"}, "not_your_turn"),
        ({"type": "dispute", "client_id": "r13"}, "no_round"),
        ({"type": "fly", "client_id": "r14"}, "bad_message"),
    ]  # fmt: skip
    for message, expected in refusals:
        valid = message["type"] != "fly" and not isinstance(message.get("amount"), int)
        assert code(await s1.ask(message, valid=valid)) == expected, message
        codes[expected] += 1
    s1_bets = [{"box": 1, "bet": "main", "amount": "10"}, {"box": 1, "bet": "in_for_6",
               "amount": "5"}, {"box": 1, "bet": "pair", "amount": "5"}]  # fmt: skip
    assert (await s1.ask({"type": "place_many", "client_id": "b1", "bets": s1_bets}))["ok"]
    resent = await s1.ask({"type": "place_many", "client_id": "b1", "bets": s1_bets})
    assert resent["resent"] is True
    assert (await s2.ask({"type": "bet_all", "client_id": "b1", "box": 2, "amount": "5"}))["ok"]
    assert (await s2.ask({"type": "undo", "client_id": "b2"}))["ok"]
    assert (await s2.ask({"type": "place", "client_id": "b3", "box": 2, "amount": "20"}))["ok"]
    assert (await s2.ask({"type": "place", "client_id": "b4", "box": 2, "bet": "21+3",
                          "amount": "5"}))["ok"]  # fmt: skip
    codes[code(await s2.ask({"type": "cash_out", "client_id": "c1"}))] += 1  # bets_on_table
    await db(writer.expire)(round.pk, "betting")
    codes[code(await s2.ask({"type": "clear", "client_id": "late"}))] += 1  # bets_closed

    # -- the card reader
    shoe = await Socket.open(f"/ws/tables/{table.pk}/shoe/", READER_MESSAGE)
    codes[code(await shoe.ask({"type": "hello", "key": "nope"}))] += 1  # unauthorized
    assert (await shoe.ask({"type": "hello", "key": "reader-secret"}))["ok"]
    codes[code(await shoe.ask({"type": "card", "seq": 1, "card": "ZZ"}))] += 1
    codes[code(await shoe.ask({"type": "card", "seq": 3, "card": "2S"}))] += 1  # a gap
    codes[code(await shoe.ask({"type": "card", "seq": 1, "card": "2S", "burn": "yes"},
                              valid=False))] += 1  # fmt: skip
    seq = 0

    async def scan(*cards: str) -> None:
        nonlocal seq
        for card in cards:
            seq += 1
            reply = await shoe.ask({"type": "card", "seq": seq, "card": card})
            assert reply["ok"], reply
        await s1.settle()
        await s2.settle()

    assert (await shoe.ask({"type": "card", "seq": 1, "card": "4D", "burn": True}))["ok"]
    seq = 1
    assert (await shoe.ask({"type": "card", "seq": 1, "card": "4D"}))["duplicate"] is True
    # box 1: 3S 3S (a hard 6 exacta: the In For 6 bonus; a suited pair); box 2: AS KD (a
    # blackjack: even money asked); the dealer's ace up (insurance), 9C in the hole.
    await scan("3S", "AS", "AH", "3S", "KD", "9C")

    async def answer(s: Socket, action: str, client_id: str, valid: bool = True) -> dict:
        message = {"type": "decide", "client_id": client_id, "action": action}
        reply = await s.ask(message, valid)
        await s1.settle()
        await s2.settle()
        return reply

    kinds = {"s1": [], "s2": []}
    for i in range(6):  # the bonus pick and insurance, in whatever order the table asks
        state1 = (await s1.ask({"type": "state", "client_id": f"q{i}"}))["state"]
        prompt = state1["table"]["station"]["prompt"]
        if prompt is None or prompt["kind"] == "decision":
            break
        kinds["s1"].append(prompt["kind"])
        if prompt["kind"] == "bonus_pick":
            codes[code(await answer(s1, "hit", "bad-pick"))] += 1  # not_allowed
            assert (await answer(s1, "pick_2", f"pick{i}"))["ok"]
        else:
            assert (await answer(s1, "insure", f"ins{i}"))["ok"]
            state2 = (await s2.ask({"type": "state", "client_id": f"q{i}"}))["state"]
            prompt2 = state2["table"]["station"]["prompt"]
            kinds["s2"].append(prompt2["kind"])
            assert (await answer(s2, "no_even_money", f"em{i}"))["ok"]
    assert sorted(kinds["s1"]) == ["bonus_pick", "insurance"] and kinds["s2"] == ["even_money"]

    # -- the decision: refusals, a dispute that halts the round, then a late answer
    codes[code(await answer(s1, "fly", "d0", valid=False))] += 1  # unknown_action
    wrong = await s1.ask({"type": "decide", "client_id": "d1", "action": "hit", "hand": "s9/1/1"})
    codes[code(wrong)] += 1  # wrong_hand
    codes[code(await answer(s2, "hit", "d2"))] += 1  # not_your_turn: s2's blackjack is done
    assert (await s1.ask({"type": "dispute", "client_id": "disp"}))["ok"]
    await s2.settle()
    codes[code(await s2.ask({"type": "dispute", "client_id": "disp"}))] += 1  # already_halted
    codes[code(await answer(s1, "hit", "d3"))] += 1  # round_halted
    await db(disputes.continue_round)(round.pk, by="supervisor")
    await s1.settle()
    await s2.settle()
    hit = await answer(s1, "hit", "d4")
    assert hit["ok"], hit
    await scan("9H")  # 3 3 9: 15
    # Time passes: the step's deadline is behind us when the answer arrives.
    await db(Round.objects.filter(pk=round.pk).update)(
        deadline=timezone.now() - timedelta(seconds=5)
    )
    late = await answer(s1, "hit", "d5")
    assert code(late) == "too_late" and late["error"]["received_at"] and late["error"]["deadline"]
    codes["too_late"] += 1
    await s1.settle()
    await s2.settle()  # the timeout stood; the dealer's soft 20 stands: settled
    codes[code(await shoe.ask({"type": "card", "seq": seq + 1, "card": "2C"}))] += 1

    state1 = (await s1.ask({"type": "state", "client_id": "end"}))["state"]
    assert state1["round"]["phase"] == "settled"
    assert state1["table"]["station"]["hands"][0]["result"] == "lose"
    # -- the next round: Let It Play refused, a bet, and a void
    round2 = await db(writer.open_round)(table)
    await s1.settle()
    await s2.settle()
    codes[code(await s1.ask({"type": "let_it_play", "client_id": "lip", "box": 1}))] += 1
    assert (await s2.ask({"type": "let_it_play", "client_id": "lip", "box": 2}))["ok"]
    await db(voids.void_round)(round2.pk, by="supervisor", reason="the shoe fell")
    await s1.settle()
    await s2.settle()

    # -- every frame each got is valid, and the round showed every kind of event
    for s in (s1, s2):
        for frame in s.frames:
            assert_valid(STATION_FRAME, frame)
    for frame in shoe.frames:
        assert_valid(READER_FRAME, frame)
    events = {f["event"]["type"] for s in (s1, s2) for f in s.frames if f["type"] == "event"}
    # corrected, state: test_corrected_events; bets_refused: tests/disputes/test_money_takebacks;
    # the table's notices: tests/stations/test_table_notices.py; the virtual shoe's
    # commitment and reveal: tests/integrity/test_fair_shoe.py (this round is a reader's);
    # seat mode's seats and seat_left: tests/stations/test_seat_mode.py (common draw here)
    notices = {"betting_restarted", "refunded", "table_status", "shoe_changed"}
    notices |= {"shoe_committed", "shoe_revealed", "seats", "seat_left"}
    assert schema_types("event") - events == {"corrected", "state", "bets_refused", *notices}
    seen = {f["error"]["code"] for s in (s1, s2, shoe) for f in s.frames if f.get("ok") is False}
    assert seen == set(codes)
    assert len(seen) >= 25, sorted(seen)


@pytest.mark.django_db(transaction=True)
async def test_a_correction_sends_corrected_and_states_valid_against_the_schema(table):
    from rounds import corrections
    from tests.helpers import play

    db = database_sync_to_async
    s1 = await join(table, "s1")
    s1_station = await db(Station.objects.get)(table=table, name="s1")
    round = await db(play)(table, [(s1_station, 1, "main", "10")], "TS 6C 9D 7H KC",
                           [("s1", "stand")])  # fmt: skip
    await s1.settle()
    await db(corrections.correct_cards)(round.pk, [{"position": 5, "card": "KD"}], by="sup")
    await s1.settle()
    kinds = [f["event"]["type"] for f in s1.frames if f["type"] == "event"]
    assert "corrected" in kinds and "state" in kinds
    for frame in s1.frames:
        assert_valid(STATION_FRAME, frame)


# -- the document, the schema and the code list the same codes and types ------------------

# Codes the engine has for its own callers that no socket can get: a decision of a station
# without a seat (the station socket checks the seat first: not_your_turn).
ENGINE_ONLY = {"unknown_station"}
REFUSERS = {"error", "Refused", "refusal", "scan_error", "error_reply"}


def produced_codes() -> set[str]:
    """Every error code in the server's source: ``code="..."`` of an EngineError (or an
    ``__init__`` of one of its kinds), the code of the consumers' refusals and a module's
    ``CODE``."""
    found: set[str] = set()
    for app in ("croupier", "payouts", "rounds", "stations", "tablehub"):
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts or "api" in path.parts:  # HTTP codes: OpenAPI
                continue
            for node in ast.walk(parse_source(path)):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                    # a module's named code, e.g. tablehub/attempts.py's CODE
                    named = any(getattr(t, "id", None) == "CODE" for t in node.targets)
                    if named and isinstance(node.value.value, str):
                        found.add(node.value.value)
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = getattr(func, "id", getattr(func, "attr", None))
                if name in ("EngineError", "TooLate", "LimitReached", "__init__"):
                    for keyword in node.keywords:
                        if keyword.arg == "code":
                            found |= {
                                c.value
                                for c in ast.walk(keyword.value)
                                if isinstance(c, ast.Constant) and isinstance(c.value, str)
                            }
                elif name in REFUSERS:
                    found |= {
                        a.value
                        for a in node.args[:2]
                        if isinstance(a, ast.Constant)
                        and isinstance(a.value, str)
                        and re.fullmatch(r"[a-z_]+", a.value)
                    }
    return found - ENGINE_ONLY


def test_every_code_the_server_produces_is_documented_and_in_the_schema():
    produced = produced_codes()
    station = documented_codes("protocol.md")
    tablet = documented_codes("croupier.md")
    assert produced - station - tablet == set(), "produced but not documented"
    assert station - produced == set(), "docs/protocol.md lists a code nothing produces"
    assert tablet - produced == set(), "docs/croupier.md lists a code nothing produces"
    assert schema_enum("error_code") == station
    assert schema_enum("tablet_error_code") == tablet


def doc_table_column(heading: str, column: int = 0) -> set[str]:
    """The code-formatted names in one column of the first table after ``heading``."""
    text = DOC[DOC.index(heading) :]
    names: set[str] = set()
    started = False
    for line in text.splitlines()[1:]:
        if line.startswith("|"):
            if not started:  # the header row
                started = True
                continue
            cell = line.split("|")[column + 1]
            names.update(re.findall(r"`([a-z_0-9]+)`", cell))
        elif started:
            break
    return names


def test_the_documents_message_and_event_types_are_the_schemas():
    commands = doc_table_column("### Commands and replies")
    assert commands | {"join"} == schema_types("station_message")
    assert "ping" in commands
    assert doc_table_column("### Events") == schema_types("event")
    assert set(re.findall(r'\{"type": "([a-z_]+)"', DOC[DOC.index("## Card reader") :])) >= (
        schema_types("reader_message")
    )
    kinds = doc_table_column("`prompt` is null when")
    assert kinds == {b["properties"]["kind"]["const"] for b in SCHEMA["$defs"]["prompt"]["oneOf"]}


# -- the croupier tablet (docs/croupier.md) -------------------------------------------------

TABLET_FRAME = validator("tablet_frame")
TABLET_MESSAGE = validator("tablet_message")


@pytest.mark.django_db(transaction=True)
async def test_every_frame_the_tablet_gets_is_valid_against_the_schema(table, settings):
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from stations.commands import place_bets
    from tablehub import roles

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    db = database_sync_to_async

    def login() -> list:
        dealer = User.objects.create_user("dealer", password="dealer-pw")
        dealer.groups.add(Group.objects.get_or_create(name=roles.DEALER)[0])
        boss = User.objects.create_user("boss", password="boss-pw")
        boss.groups.add(Group.objects.get_or_create(name=roles.SUPERVISOR)[0])
        table.staff.add(dealer, boss)  # dealers open only their tables' tablets
        client = Client()
        client.force_login(dealer)
        return ORIGIN + [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]

    ws = WebsocketCommunicator(
        application, f"/ws/tables/{table.pk}/croupier/", headers=await db(login)()
    )
    assert (await ws.connect())[0]
    tablet = Socket(ws, TABLET_MESSAGE)
    tablet.frames.append(await ws.receive_json_from())  # the state on connecting
    codes: Counter = Counter()
    boss = {"username": "boss", "password": "boss-pw"}
    codes[code(await tablet.ask("{nope", valid=False))] += 1  # bad_json
    codes[code(await tablet.ask({"type": "fly", "client_id": "t0"}, valid=False))] += 1
    codes[code(await tablet.ask({"type": "manual_card", "client_id": "t1"}, valid=False))] += 1
    codes[code(await tablet.ask({"type": "close_bets", "client_id": "t2"}))] += 1  # no_round
    assert (await tablet.ask({"type": "open_table", "client_id": "t3"}))["ok"]
    codes[code(await tablet.ask({"type": "close_bets", "client_id": "t4"}))] += 1  # no_bets
    s1 = await db(Station.objects.get)(table=table, name="s1")
    await db(place_bets)(s1, [(1, "main", 10)])
    await tablet.settle()
    assert (await tablet.ask({"type": "close_bets", "client_id": "t5"}))["ok"]
    codes[code(await tablet.ask({"type": "new_shoe", "client_id": "t6"}))] += 1  # in play
    for n, card in enumerate(["TS", "6C", "9D", "7H"]):  # 19 against 13
        reply = await tablet.ask({"type": "manual_card", "client_id": f"c{n}", "card": card})
        assert reply["ok"] and reply["scan"]["seq"] == n + 1, reply
    codes[code(await tablet.ask({"type": "manual_card", "client_id": "c9", "card": "ZZ"}))] += 1
    codes[code(await tablet.ask({"type": "manual_card", "client_id": "ca", "card": "2C"}))] += 1
    shoe = await Socket.open(f"/ws/tables/{table.pk}/shoe/", READER_MESSAGE)
    assert (await shoe.ask({"type": "hello", "key": "reader-secret"}))["ok"]
    assert not (await shoe.ask({"type": "card", "seq": 9, "card": "2C"}))["ok"]  # a gap
    await tablet.settle()  # the reader's error reached the tablet
    round = await db(lambda: table.rounds.get())()
    await db(writer.record)(round.pk, writer_decision("s1", "stand"))
    await tablet.settle()
    reply = await tablet.ask({"type": "manual_card", "client_id": "cb", "card": "KC"})
    assert reply["ok"] and reply["state"]["previous"]["phase"] == "settled"  # the next opened
    void = {"type": "void_round", "client_id": "v1", "reason": "test"}
    codes[code(await tablet.ask(void | {"supervisor": {"username": "boss", "password": "x"}}))] += 1
    fix = {"type": "correct_card", "client_id": "x1", "supervisor": boss, "position": 9,
           "card": "KD"}  # fmt: skip
    codes[code(await tablet.ask(fix))] += 1  # no_such_card
    discard = {"type": "discard_card", "client_id": "d1", "supervisor": boss, "reason": "fell"}
    codes[code(await tablet.ask(discard))] += 1  # no_round: none is being dealt
    assert (await tablet.ask({"type": "new_shoe", "client_id": "t7"}))["ok"]
    assert (await tablet.ask({"type": "state", "client_id": "t8"}))["ok"]
    assert (await tablet.ask({"type": "close_table", "client_id": "t9"}))["ok"]
    await tablet.settle()
    await ws.disconnect()
    await shoe.ws.disconnect()

    for frame in tablet.frames:
        assert_valid(TABLET_FRAME, frame)
    kinds = {f["type"] for f in tablet.frames}
    assert kinds == {"state", "reply", "event", "reader_error", "changed"}
    seen = {f["error"]["code"] for f in tablet.frames if f.get("ok") is False}
    assert seen == set(codes) and len(seen) >= 10, sorted(seen)


def writer_decision(station: str, action: str):
    from rounds.engine import Decision

    return Decision(station, action)


def test_the_tablets_commands_are_the_schemas():
    text = (ROOT / "docs" / "croupier.md").read_text()
    table = text[text.index("### Commands and replies") :]
    commands: set[str] = set()
    started = False
    for line in table.splitlines():
        if line.startswith("|"):
            if started and not line.startswith("|---"):
                commands.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
            started = True
        elif started:
            break
    assert commands == schema_types("tablet_message")
