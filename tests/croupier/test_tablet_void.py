"""rounds.voids.void_round as a service: refunds to the cent, never twice, timers disarmed;
and what the rest of the table makes of a void round."""

from decimal import Decimal

import pytest

from croupier import tablet
from croupier.virtual_shoe import deal_next
from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import EngineError, RuleSet
from rounds.models import Round, RoundEvent
from rounds.voids import void_round
from stations.commands import handle, station_state
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    for name in ("s1", "s2"):
        station = Station.objects.create(table=table, name=name)
        cash_in(station, "50", key="start")
    return table


def place(table, name, box, amount):
    station = Station.objects.get(table=table, name=name)
    reply = handle(
        station, {"type": "place", "client_id": f"{name}-{box}", "box": box, "amount": amount}
    )
    assert reply["ok"], reply


def balances(table):
    return {s.name: ledger.balance(s) for s in table.stations.order_by("name")}


def test_a_void_in_play_refunds_every_station_once(table):
    round = writer.open_round(table)
    place(table, "s1", 1, "10")
    place(table, "s2", 2, "7.50")
    writer.close_bets(round.pk)
    deal_next(table)
    assert balances(table) == {"s1": Decimal("40.00"), "s2": Decimal("42.50")}
    round.refresh_from_db()
    step_key = round.step_key

    void_round(round.pk, "boss", "  card on the floor  ")
    assert balances(table) == {"s1": Decimal("50.00"), "s2": Decimal("50.00")}
    round.refresh_from_db()
    assert round.phase == Round.Phase.VOID and (round.step_key, round.deadline) == ("", None)
    event = RoundEvent.objects.get(round=round, kind="void")
    assert event.seq == round.last_seq
    assert event.payload == {"by": "boss", "reason": "card on the floor", "requested_by": ""}
    assert writer.expire(round.pk, step_key) == []  # a late timer finds nothing to do

    entries = LedgerEntry.objects.count()
    with pytest.raises(EngineError) as exc:
        void_round(round.pk, "boss", "again")
    assert exc.value.code == "already_void"
    assert LedgerEntry.objects.count() == entries
    assert sum(e.amount for e in LedgerEntry.objects.filter(round=round)) == 0  # double entry


def test_a_void_while_betting_moves_no_money_and_a_settled_round_cannot_be_voided(table):
    round = writer.open_round(table)
    place(table, "s1", 1, "10")
    void_round(round.pk, "boss", "table fault")
    assert LedgerEntry.objects.filter(round=round).count() == 0
    assert balances(table)["s1"] == Decimal("50.00")

    settled = writer.open_round(table)
    Round.objects.filter(pk=settled.pk).update(phase=Round.Phase.SETTLED)
    with pytest.raises(EngineError) as exc:
        void_round(settled.pk, "boss", "too late")
    assert exc.value.code == "round_over"
    for reason, code in (
        ("", "missing_field"),
        ("   ", "missing_field"),
        ("x" * 201, "bad_message"),
    ):
        with pytest.raises(EngineError) as exc:
            void_round(settled.pk, "boss", reason)
        assert exc.value.code == code


def test_the_tablet_state_of_a_void_round(table):
    round = writer.open_round(table)
    place(table, "s1", 1, "10")
    writer.close_bets(round.pk)
    deal_next(table)
    void_round(round.pk, "boss", "misdeal", requested_by="dealer")
    state = tablet.croupier_state(table)
    assert state["round"]["phase"] == "void" and state["awaiting"] == "open bets"
    assert state["round"]["void"] == {"by": "boss", "reason": "misdeal", "requested_by": "dealer"}
    assert len(state["round"]["cards"]) == 1 and state["round"]["card_for"] is None


def test_a_station_reads_its_state_after_a_void_at_a_closed_table(table):
    round = writer.open_round(table)
    place(table, "s1", 1, "10")
    writer.close_bets(round.pk)
    deal_next(table)
    void_round(round.pk, "boss", "misdeal")
    writer.forget_cached_engines()  # another process, or after a restart
    state = station_state(Station.objects.get(table=table, name="s1"))
    assert state["credits"] == "50.00"
