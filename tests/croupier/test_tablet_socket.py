"""The croupier tablet's socket over the real ASGI app, with a logged-in Django session.

Who may connect; the state on connect; open table, close bets and the virtual shoe dealing a
whole round to the cent; manual cards; reader errors reaching the tablet; bad input; voids
with and without a supervisor's login; and never the hole card before its reveal.
"""

import json
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.db import connections
from django.test import Client

from croupier.services import current_shoe
from payouts import ledger
from payouts.models import LedgerEntry
from rounds.engine import ALL_CARDS, RuleSet
from rounds.models import Round, RoundEvent
from stations.commands import handle as station_handle
from stations.models import Station
from stations.services import cash_in
from tablehub import roles
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Shoe, Table, TableConfig
from tests.helpers import ask, drain

ORIGIN = [(b"origin", b"http://127.0.0.1")]
db = database_sync_to_async


@pytest.fixture(autouse=True)
async def close_the_consumers_connection():
    """The consumers' database work runs in asgiref's sync thread; close its connection so
    the test database can be dropped afterwards."""
    yield
    await database_sync_to_async(connections.close_all)()


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def staff(username, role=None):
    user = User.objects.create_user(username, password=f"{username}-pw")
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


@pytest.fixture
def table(transactional_db, fast_passwords):
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    table.set_reader_key("reader-secret")
    table.save()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=1).to_dict(),
        limits={"main": ["1", "100"], "special": ["1", "25"]},
        special_bets={"21+3": {"straight_flush": 40, "flush": 5}},
    )
    station = Station(table=table, name="s1")
    station.set_credential("s1-secret")
    station.save()
    cash_in(station, "100", key="start")
    # Dealers and supervisors work the tablets of their own tables (Table.staff).
    table.staff.add(staff("dealer", roles.DEALER), staff("boss", roles.SUPERVISOR))
    staff("guest")
    return table


def session_headers(username):
    client = Client()
    client.force_login(User.objects.get(username=username))
    return [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]


async def open_socket(table, username=None, table_id=None):
    headers = ORIGIN + (await db(session_headers)(username) if username else [])
    path = f"/ws/tables/{table_id or table.pk}/croupier/"
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def tablet(table, username="dealer"):
    ws = await open_socket(table, username)
    frames = [await ws.receive_json_from()]
    assert frames[0]["type"] == "state"
    return ws, frames


def stack(table, cards):
    """Put these cards on top of the virtual shoe (the rest of one deck after them)."""
    shoe = current_shoe(table)
    rest = [str(c) for c in ALL_CARDS if str(c) not in cards]
    shoe.virtual_order = {"cards": list(cards) + rest, "start": shoe.reader_seq}
    shoe.save(update_fields=["virtual_order"])


def station(table, name="s1"):
    return Station.objects.get(table=table, name=name)


def bet(table, client_id, **message):
    reply = station_handle(station(table), {"client_id": client_id, **message})
    assert reply["ok"], reply
    return reply


def balance(table, name="s1"):
    return ledger.balance(station(table, name))


def counts():
    return (RoundEvent.objects.count(), LedgerEntry.objects.count(), Round.objects.count())


@pytest.mark.django_db(transaction=True)
async def test_only_tablet_staff_may_connect(table):
    for username, code in ((None, 4401), ("guest", 4403)):
        ws = await open_socket(table, username)
        assert await ws.receive_output() == {"type": "websocket.close", "code": code}
    ws = await open_socket(table, "dealer", table_id=table.pk + 99)
    assert await ws.receive_output() == {"type": "websocket.close", "code": 4404}
    ws, frames = await tablet(table, "boss")  # a supervisor works the tablet too
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_round_dealt_from_the_tablet_to_the_cent(table):
    ws, frames = await tablet(table)
    state = frames[0]["state"]
    assert state["table"] == {
        "id": table.pk,
        "name": "t1",
        "is_open": False,
        "mode": "dealer",
        "boxes": 3,
        "currency": "USD",
    }
    assert state["round"] is None and state["awaiting"] == "open bets"

    opened = await ask(ws, frames, {"type": "open_table", "client_id": "o1"})
    assert opened["ok"], opened
    state = opened["state"]
    assert state["table"]["is_open"] is True
    assert state["round"]["phase"] == "betting" and state["round"]["deadline"]
    assert state["awaiting"] == "close bets"
    again = await ask(ws, frames, {"type": "open_table", "client_id": "o2"})
    assert again["state"]["round"]["id"] == state["round"]["id"]  # one betting round

    await db(bet)(table, "b1", type="place", box=1, amount="10")
    await db(stack)(table, ["TS", "7H", "9C", "TD"])  # box 1 19; dealer 7 up, 10 in the hole
    closed = await ask(ws, frames, {"type": "close_bets", "client_id": "c1"})
    assert closed["ok"], closed
    assert closed["state"]["round"]["phase"] == "deal"
    assert closed["state"]["awaiting"] == "deal box 1"
    assert closed["state"]["round"]["stations"] == [
        {"station": "s1", "done": True, "hands": 1, "hands_finished": 0}
    ]
    late = await ask(ws, frames, {"type": "close_bets", "client_id": "c2"})
    assert late["error"]["code"] == "bets_closed"

    prompts = []
    for n in range(4):
        dealt = await ask(ws, frames, {"type": "deal", "client_id": f"d{n}"})
        assert dealt["ok"], dealt
        assert dealt["scan"] == {"duplicate": False, "seq": n + 1}
        prompts.append(dealt["state"]["awaiting"])
    assert prompts == [
        "deal the dealer's up card",
        "deal box 1",
        "deal the hole card",
        "wait for the stations",
    ]
    state = dealt["state"]
    assert state["round"]["view"]["dealer"] == {"cards": ["7H"], "hole_card": "face_down"}
    assert state["round"]["stations_done"] == 0 and state["round"]["card_for"] is None
    assert [c["label"] for c in state["round"]["cards"]] == [
        "box 1",
        "dealer up",
        "box 1",
        "hole (face down)",
    ]
    assert state["round"]["cards"][3]["card"] is None
    assert state["shoe"]["cards_drawn"] == 4 and state["shoe"]["reader_seq"] == 4

    before = await db(counts)()
    unwanted = await ask(ws, frames, {"type": "deal", "client_id": "d9"})
    assert unwanted["error"]["code"] == "card_not_expected"
    assert await db(counts)() == before

    await db(bet)(table, "s1", type="decide", action="stand")
    await drain(ws, frames)
    final = await ask(ws, frames, {"type": "state", "client_id": "x1"})
    state = final["state"]
    assert state["round"]["phase"] == "betting"  # the table is open: the next round is up
    assert state["round"]["id"] != closed["state"]["round"]["id"]
    last = state["previous"]
    assert last["phase"] == "settled"
    assert last["dealer"] == {"cards": ["7H", "TD"], "total": 17, "blackjack": False, "bust": False}
    assert [(c["card"], c["label"]) for c in last["cards"]] == [
        ("TS", "box 1"),
        ("7H", "dealer up"),
        ("9C", "box 1"),
        ("TD", "hole (shown)"),
    ]
    assert await db(balance)(table) == Decimal("110.00")  # 19 beats 17: 10 staked, 20 back

    reveal = next(i for i, f in enumerate(frames) if f.get("event", {}).get("type") == "hole_card")
    assert "TD" not in json.dumps(frames[:reveal])  # never before the reveal
    assert frames[reveal]["event"] == {"type": "hole_card", "card": "TD"}
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_manual_cards_are_scans_with_the_next_sequence_number(table):
    ws, frames = await tablet(table)
    await ask(ws, frames, {"type": "open_table", "client_id": "o"})
    await db(bet)(table, "b", type="place", box=1, amount="10")
    await ask(ws, frames, {"type": "close_bets", "client_id": "c"})

    burned = await ask(
        ws, frames, {"type": "manual_card", "client_id": "m1", "card": "2C", "burn": True}
    )
    assert burned["ok"], burned
    entered = await ask(ws, frames, {"type": "manual_card", "client_id": "m2", "card": "TD"})
    assert entered["ok"] and entered["scan"] == {"duplicate": False, "seq": 2}
    assert "TD" not in json.dumps(entered["scan"])
    cards = entered["state"]["round"]["cards"]
    assert [(c["card"], c["to"], c["label"]) for c in cards] == [
        ("2C", "burn", "burn"),
        ("TD", "box", "box 1"),
    ]
    before = await db(counts)()
    for n, message, code in [
        (3, {"card": "TD"}, "card_count_exceeded"),  # one deck: one ten of diamonds
        (4, {"card": "ZZ"}, "unreadable_card"),
        (5, {"card": "9S", "burn": True}, "card_not_expected"),  # burns only before the deal
        (6, {}, "missing_field"),
        (7, {"card": 9}, "bad_message"),
        (8, {"card": "9S", "burn": "yes"}, "bad_message"),
    ]:
        refused = await ask(ws, frames, {"type": "manual_card", "client_id": f"m{n}", **message})
        assert refused["error"]["code"] == code, refused
    assert await db(counts)() == before
    shoe = await db(current_shoe)(table)
    assert (shoe.reader_seq, shoe.cards_drawn) == (2, 2)
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_reader_errors_reach_the_tablet(table):
    ws, frames = await tablet(table)
    await ask(ws, frames, {"type": "open_table", "client_id": "o"})
    await db(bet)(table, "b", type="place", box=1, amount="10")
    await ask(ws, frames, {"type": "close_bets", "client_id": "c"})
    reader = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/shoe/", headers=ORIGIN)
    assert (await reader.connect())[0]
    await reader.send_json_to({"type": "hello", "key": "reader-secret"})
    assert (await reader.receive_json_from())["ok"]

    async def read(seq, card):
        await reader.send_json_to({"type": "card", "seq": seq, "card": card})
        return await reader.receive_json_from()

    for seq, card, code in [(3, "9S", "sequence_gap"), (1, "1X", "unreadable_card")]:
        assert (await read(seq, card))["error"]["code"] == code
        error = await ws.receive_json_from()
        assert error["type"] == "reader_error" and error["code"] == code
        assert error["message"]
    assert (await read(1, "9S"))["ok"]
    await drain(ws, frames)
    assert (await read(1, "9S"))["duplicate"] is True  # a repeated scan is ignored, no error
    assert await ws.receive_nothing(timeout=0.2)
    assert (await read(2, "9S"))["error"]["code"] == "card_count_exceeded"
    error = await ws.receive_json_from()
    assert (error["type"], error["code"]) == ("reader_error", "card_count_exceeded")
    assert "9S" not in error["message"]  # the tablet faces the table: never the card read
    alert = await ws.receive_json_from()  # card conservation: the supervisor is alerted
    assert (alert["type"], alert["code"], alert["seq"]) == ("supervisor_alert", error["code"], 2)
    assert "9S" not in alert["message"]
    await reader.disconnect()
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_bad_input_gets_a_code_and_changes_nothing(table):
    ws, frames = await tablet(table)
    await ask(ws, frames, {"type": "open_table", "client_id": "o"})
    await db(bet)(table, "b", type="place", box=1, amount="10")
    await ask(ws, frames, {"type": "close_bets", "client_id": "c"})
    before = await db(counts)()
    await ws.send_to(text_data="{not json")
    assert (await ws.receive_json_from())["error"]["code"] == "bad_json"
    await ws.send_to(text_data="x" * 5000)
    assert (await ws.receive_json_from())["error"]["code"] == "bad_message"
    for message, code in [
        ([1, 2], "bad_message"),
        ({"type": "deal"}, "bad_message"),  # no client_id
        ({"type": "deal", "client_id": 7}, "bad_message"),
        ({"type": "deal", "client_id": "x" * 65}, "bad_message"),
        ({"type": "shuffle", "client_id": "u"}, "unknown_type"),
        ({"client_id": "u2"}, "unknown_type"),
        ({"type": "void_round", "client_id": "v", "reason": "x"}, "supervisor_required"),
    ]:
        await ws.send_json_to(message)
        reply = await ws.receive_json_from()
        assert reply["type"] == "reply" and reply["ok"] is False
        assert reply["error"]["code"] == code, (message, reply)
    assert await db(counts)() == before

    dealt = await ask(ws, frames, {"type": "deal", "client_id": "d1"})
    resent = await ask(ws, frames, {"type": "deal", "client_id": "d1"})
    assert resent["resent"] is True and resent["scan"] == dealt["scan"]
    assert (await db(current_shoe)(table)).reader_seq == 1  # dealt once
    await ws.disconnect()


async def void_setup(table):
    """A round in play: s1 has main 10 and 21+3 2 on box 1 (a flush: 12 back at once),
    insurance 5 and a double 10 against the dealer's ace: 85.00 of its 100.00 left."""
    ws, frames = await tablet(table)
    await ask(ws, frames, {"type": "open_table", "client_id": "o"})
    await db(bet)(table, "b1", type="place", box=1, amount="10")
    await db(bet)(table, "b2", type="place", box=1, bet="21+3", amount="2")
    await db(stack)(table, ["5H", "AH", "6H", "9C", "2S"])
    await ask(ws, frames, {"type": "close_bets", "client_id": "c"})
    for n in range(4):
        assert (await ask(ws, frames, {"type": "deal", "client_id": f"d{n}"}))["ok"]
    await db(bet)(table, "i", type="decide", action="insure")
    await db(bet)(table, "x", type="decide", action="double")
    state = (await ask(ws, frames, {"type": "state", "client_id": "s"}))["state"]
    assert state["round"]["phase"] == "play" and state["awaiting"] == "draw a card"
    assert await db(balance)(table) == Decimal("85.00")
    return ws, frames, state["round"]["id"]


SUPERVISOR = {"username": "boss", "password": "boss-pw"}


@pytest.mark.django_db(transaction=True)
async def test_a_void_needs_a_supervisor_and_returns_every_stake(table):
    ws, frames, round_id = await void_setup(table)
    before = await db(counts)()
    for n, supervisor in enumerate(
        [
            {"username": "boss", "password": "wrong"},
            {"username": "dealer", "password": "dealer-pw"},  # a dealer may not approve
            {"username": "nobody", "password": "x"},
            "boss",
            None,
        ]
    ):
        refused = await ask(
            ws,
            frames,
            {
                "type": "void_round",
                "client_id": f"v{n}",
                "reason": "misdeal",
                "supervisor": supervisor,
            },
        )
        assert refused["error"]["code"] == "supervisor_required", refused
    no_reason = await ask(
        ws, frames, {"type": "void_round", "client_id": "vr", "supervisor": SUPERVISOR}
    )
    assert no_reason["error"]["code"] == "missing_field"
    assert await db(counts)() == before
    assert await db(balance)(table) == Decimal("85.00")

    voided = await ask(
        ws,
        frames,
        {
            "type": "void_round",
            "client_id": "v",
            "reason": "misdeal",
            "round": round_id,
            "supervisor": SUPERVISOR,
        },
    )
    assert voided["ok"], voided
    assert await db(balance)(table) == Decimal("100.00")  # as before the round, to the cent
    round = await db(Round.objects.get)(pk=round_id)
    assert round.phase == Round.Phase.VOID and round.deadline is None
    record = await db(lambda: round.events.get(kind="void").payload)()
    assert record == {"by": "boss", "reason": "misdeal", "requested_by": "dealer"}
    public = [f["event"] for f in frames if f.get("type") == "event" and f["round"] == round_id]
    assert {"type": "void", "reason": "misdeal"} in public
    state = voided["state"]
    assert state["round"]["phase"] == "betting"  # the table is open: a new round
    assert state["previous"]["id"] == round_id and state["previous"]["phase"] == "void"
    assert state["previous"]["void"]["reason"] == "misdeal"

    after = await db(counts)()
    again = await ask(
        ws,
        frames,
        {
            "type": "void_round",
            "client_id": "again",
            "reason": "again",
            "round": round_id,
            "supervisor": SUPERVISOR,
        },
    )
    assert again["error"]["code"] == "already_void", again
    assert await db(counts)() == after
    assert await db(balance)(table) == Decimal("100.00")
    refunds = await db(
        lambda: list(
            LedgerEntry.objects.filter(kind="refund", station__isnull=False).values_list(
                "key", "amount"
            )
        )
    )()
    assert sorted(refunds) == sorted(
        [
            (f"round:{round_id}:s1:bet:1:main:void", Decimal("10.00")),
            (f"round:{round_id}:s1:bet:1:21+3:void", Decimal("2.00")),
            (f"round:{round_id}:s1:special:1:21+3:return:void", Decimal("-12.00")),
            (f"round:{round_id}:s1:s1/1/1:insurance:void", Decimal("5.00")),
            (f"round:{round_id}:s1:s1/1/1:double:void", Decimal("10.00")),
        ]
    )
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_corrections_and_disputes_need_a_supervisor(table):
    """(Disputes and corrections themselves: tests/disputes/.)"""
    ws, frames = await tablet(table)
    for kind in ("correct_card", "resolve_dispute", "discard_card"):
        wrong = await ask(
            ws,
            frames,
            {
                "type": kind,
                "client_id": f"{kind}1",
                "supervisor": {"username": "boss", "password": "no"},
            },
        )
        assert wrong["error"]["code"] == "supervisor_required"
    nothing = await ask(
        ws,
        frames,
        {
            "type": "resolve_dispute",
            "client_id": "r2",
            "resolution": "continue",
            "supervisor": SUPERVISOR,
        },
    )
    assert nothing["error"] == {"code": "no_dispute", "message": "no dispute is open at this table"}
    no_cards = await ask(
        ws,
        frames,
        {
            "type": "correct_card",
            "client_id": "c2",
            "position": 1,
            "card": "2C",
            "supervisor": SUPERVISOR,
        },
    )
    assert no_cards["error"]["code"] == "no_round"
    no_deal = await ask(
        ws,
        frames,
        {"type": "discard_card", "client_id": "d2", "reason": "dropped", "supervisor": SUPERVISOR},
    )
    assert no_deal["error"]["code"] == "no_round"
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_new_shoe_between_rounds_only_and_close_table(table):
    ws, frames = await tablet(table)
    await ask(ws, frames, {"type": "open_table", "client_id": "o"})
    await db(bet)(table, "b", type="place", box=1, amount="10")
    await ask(ws, frames, {"type": "close_bets", "client_id": "c"})
    assert (await ask(ws, frames, {"type": "deal", "client_id": "d"}))["ok"]
    busy = await ask(ws, frames, {"type": "new_shoe", "client_id": "n1"})
    assert busy["error"]["code"] == "round_in_play"

    closed = await ask(ws, frames, {"type": "close_table", "client_id": "ct"})
    assert closed["ok"] and closed["state"]["table"]["is_open"] is False
    assert closed["state"]["round"]["phase"] == "deal"  # the round in play goes on
    voided = await ask(
        ws,
        frames,
        {"type": "void_round", "client_id": "v", "reason": "shoe fault", "supervisor": SUPERVISOR},
    )
    assert voided["ok"], voided
    assert voided["state"]["round"]["phase"] == "void"  # closed: no next round
    assert voided["state"]["awaiting"] == "open bets"
    old = voided["state"]["shoe"]["id"]
    fresh = await ask(ws, frames, {"type": "new_shoe", "client_id": "n2"})
    assert fresh["ok"], fresh
    assert fresh["state"]["shoe"]["id"] != old and fresh["state"]["shoe"]["reader_seq"] == 0
    assert await db(lambda: Shoe.objects.get(pk=old).closed_at is not None)()

    reopened = await ask(ws, frames, {"type": "open_table", "client_id": "o2"})
    assert reopened["state"]["round"]["phase"] == "betting"
    round_id = reopened["state"]["round"]["id"]
    shut = await ask(ws, frames, {"type": "close_table", "client_id": "ct2"})
    assert shut["state"]["round"]["id"] == round_id  # nobody bet: the round is cancelled
    assert shut["state"]["round"]["phase"] == "void"
    assert shut["state"]["round"]["void"]["reason"] == "the table closed with no bets"
    nothing = await ask(ws, frames, {"type": "close_bets", "client_id": "c2"})
    assert nothing["error"]["code"] == "no_round"
    await ws.disconnect()
