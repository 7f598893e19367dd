"""A station's tip to the dealer (docs/protocol.md, ``tip``): where the jurisdiction allows
it, the ledger moves it from the credits to the table's tip account, once per client_id,
the meters count it and the tablet hears it (over real websockets); every refusal has its
code and changes nothing (credits, entries, meters)."""

from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.test import Client

from payouts import ledger, meters
from payouts.models import LedgerEntry, StationMeter, TableMeter
from rounds import writer
from rounds.engine import RuleSet
from stations.commands import handle, place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub import roles
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Table, TableConfig
from tests import test_protocol_contract as contract
from tests.test_protocol_contract import ORIGIN, STATION_FRAME, TABLET_FRAME, assert_valid, join

D = Decimal
db = database_sync_to_async
_close_the_consumers_connection = contract._close_the_consumers_connection


def a_table(tips_allowed: bool = True, mode: str = Table.Mode.DEALER) -> Table:
    jurisdiction = Jurisdiction.objects.create(
        code=f"j{Jurisdiction.objects.count()}", name="J", tips_allowed=tips_allowed
    )
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction, boxes=3, mode=mode)
    TableConfig.objects.create(
        table=table, version=1, rules=RuleSet().to_dict(), limits={"main": ["1", "100"]}
    )
    return table


def a_station(table: Table, credits: str = "100.00") -> Station:
    station = Station(table=table, name="s1")
    station.set_credential("s1-secret")  # tests.test_protocol_contract.join's
    station.save()
    cash_in(station, credits, key="start")
    return station


def tip(station: Station, client_id: str, amount: object) -> dict:
    return handle(station, {"type": "tip", "client_id": client_id, "amount": amount})


def tips_meter(station: Station) -> tuple[Decimal, Decimal]:
    mine = meters.shown(StationMeter.objects.filter(pk=station.pk).first())["tips"]
    table = meters.shown(TableMeter.objects.filter(pk=station.table_id).first())["tips"]
    return mine, table


@pytest.mark.django_db
def test_a_tip_moves_credits_to_the_tables_tip_account_once():
    s1 = a_station(a_table())
    reply = tip(s1, "t-1", "2.55")
    assert reply["ok"] and reply["state"]["credits"] == "97.45"
    tips = LedgerEntry.objects.filter(kind=LedgerEntry.Kind.TIP).order_by("pk")
    assert [(e.station_id, e.amount, e.key) for e in tips] == [
        (s1.pk, D("-2.55"), f"station:{s1.pk}:tip:client:t-1"),
        (None, D("2.55"), f"station:{s1.pk}:tip:client:t-1|tips"),  # the tip account
    ]
    assert tips_meter(s1) == (D("2.55"), D("2.55"))
    again = tip(s1, "t-1", "2.55")  # sent again: the same reply, moved once
    assert again["resent"] and again["state"]["credits"] == "97.45"
    assert tips.count() == 2 and ledger.balance(s1) == D("97.45")
    assert tip(s1, "t-2", "97.45")["state"]["credits"] == "0.00"  # the whole credits
    assert tips_meter(s1) == (D("100.00"), D("100.00"))
    assert ledger.check() == []


def _everything(station: Station) -> tuple:
    """What a refused tip must leave as it was."""
    entries = list(LedgerEntry.objects.order_by("pk").values_list("key", "amount"))
    meter = meters.shown(StationMeter.objects.filter(pk=station.pk).first())
    table = meters.shown(TableMeter.objects.filter(pk=station.table_id).first())
    return ledger.balance(station), entries, meter, table


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("tips_allowed", "mode", "amount", "code"),
    [
        (False, Table.Mode.DEALER, "1.00", "tips_not_allowed"),
        (True, Table.Mode.VIDEO, "1.00", "tips_not_allowed"),  # no dealer to tip
        (True, Table.Mode.DEALER, "0", "bad_amount"),
        (True, Table.Mode.DEALER, "-1.00", "bad_amount"),
        (True, Table.Mode.DEALER, "1.005", "bad_amount"),
        (True, Table.Mode.DEALER, 5, "bad_amount"),  # money is a string
        (True, Table.Mode.DEALER, None, "bad_amount"),
        (True, Table.Mode.DEALER, "100.01", "insufficient_credits"),
    ],
)
def test_a_refused_tip_has_its_code_and_changes_nothing(tips_allowed, mode, amount, code):
    s1 = a_station(a_table(tips_allowed, mode))
    before = _everything(s1)
    reply = tip(s1, "t-1", amount)
    assert not reply["ok"] and reply["error"]["code"] == code
    assert _everything(s1) == before
    assert tips_meter(s1) == (D("0.00"), D("0.00"))
    assert ledger.check() == []


@pytest.mark.django_db
def test_a_tip_leaves_the_stakes_of_the_open_round_covered():
    table = a_table()
    s1 = a_station(table, "20.00")
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("15.00"))])
    before = _everything(s1)
    refused = tip(s1, "t-1", "5.01")  # 20.00 - 15.00 staked: 5.00 left to tip
    assert refused["error"]["code"] == "insufficient_credits"
    assert _everything(s1) == before
    assert tip(s1, "t-2", "5.00")["state"]["credits"] == "15.00"
    writer.close_bets(round.pk)  # the stakes are still covered
    assert ledger.balance(s1) == D("0.00")
    assert tips_meter(s1) == (D("5.00"), D("5.00"))
    assert ledger.check() == []


@pytest.mark.django_db(transaction=True)
async def test_the_tablet_hears_a_stations_tip(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    table = await db(a_table)()
    await db(a_station)(table)

    def login() -> list:
        dealer = User.objects.create_user("dealer", password="dealer-pw")
        dealer.groups.add(Group.objects.get_or_create(name=roles.DEALER)[0])
        table.staff.add(dealer)
        client = Client()
        client.force_login(dealer)
        return ORIGIN + [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]

    headers = await db(login)()
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/croupier/", headers=headers)
    assert (await ws.connect())[0]
    await ws.receive_json_from()  # the tablet's state on connecting
    s1 = await join(table, "s1")
    reply = await s1.ask({"type": "tip", "client_id": "t-1", "amount": "3.00"})
    assert reply["ok"] and reply["state"]["credits"] == "97.00"
    frame = await ws.receive_json_from(timeout=5)
    assert_valid(TABLET_FRAME, frame)
    assert {k: frame[k] for k in ("type", "station", "amount", "currency")} == {
        "type": "tip", "station": "s1", "amount": "3.00", "currency": "USD",
    }  # fmt: skip
    refused = await s1.ask({"type": "tip", "client_id": "t-2", "amount": "97.01"})
    assert refused["error"]["code"] == "insufficient_credits"
    assert await ws.receive_nothing(timeout=0.3)  # a refused tip is not told
    for got in s1.frames:
        assert_valid(STATION_FRAME, got)
    await s1.ws.disconnect()
    await ws.disconnect()
    assert await db(tips_meter)(await db(Station.objects.get)(table=table)) == (D("3"), D("3"))


@pytest.mark.django_db
def test_tips_turned_off_apply_to_a_station_already_joined():
    s1 = a_station(a_table())
    assert s1.table.jurisdiction.tips_allowed  # as a socket's station has it since its join
    Jurisdiction.objects.filter(pk=s1.table.jurisdiction_id).update(tips_allowed=False)
    before = _everything(s1)
    assert tip(s1, "t-1", "1.00")["error"]["code"] == "tips_not_allowed"
    assert _everything(s1) == before
