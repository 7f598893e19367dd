"""Round services: refusals write nothing, money moves once, late bets are refused."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import CardDrawn, Decision, EngineError, RuleSet, parse_card
from rounds.models import Round, RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    return table


def seated(table, name, credits):
    station = Station.objects.create(table=table, name=name)
    cash_in(station, credits, key="start")
    return station


def deal(round, text):
    for card in text.split():
        writer.record(round.pk, CardDrawn(parse_card(card)))


def test_a_refused_decision_writes_nothing(table):
    s1 = seated(table, "s1", "100")
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("10"))])
    writer.close_bets(round.pk)
    deal(round, "5S 9C 6D 7D")
    writer.record(round.pk, Decision("s1", "hit"))
    deal(round, "2H")
    events, entries = RoundEvent.objects.count(), LedgerEntry.objects.count()
    with pytest.raises(EngineError, match="double is not allowed on a 3-card hand"):
        writer.record(round.pk, Decision("s1", "double"))
    assert (RoundEvent.objects.count(), LedgerEntry.objects.count()) == (events, entries)
    writer.record(round.pk, Decision("s1", "stand"))  # the round goes on from the log


def test_a_double_is_staked_once_and_credits_equal_the_ledger(table):
    s1 = seated(table, "s1", "100")
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("10"))])
    writer.close_bets(round.pk)
    deal(round, "5S 9C 6D 7D")
    writer.record(round.pk, Decision("s1", "double"))
    assert ledger.balance(s1) == D("80.00")
    writer.forget_cached_engines()  # a second writer rebuilds from the log and finds the keys taken
    deal(round, "2H")  # its next write (the double's card) posts no stake again
    assert ledger.balance(s1) == D("80.00")
    assert writer.state(round.pk).seats["s1"].hands[0].finished
    assert writer.state(round.pk).seats["s1"].credits == ledger.balance(s1)


def test_an_entry_key_cannot_be_written_twice(table):
    s1 = seated(table, "s1", "10")
    with pytest.raises(IntegrityError), transaction.atomic():
        ledger.post(
            s1, None, LedgerEntry.Kind.CASH_IN, D("5"), ledger.CashKey(s1.pk, "cash_in", "start")
        )


def test_cash_in_is_idempotent_by_key(table):
    s1 = seated(table, "s1", "10")
    cash_in(s1, "10", key="start")
    assert ledger.balance(s1) == D("10.00")


def test_a_bet_after_bets_closed_is_refused(table):
    s1 = seated(table, "s1", "100")
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("10"))])
    writer.close_bets(round.pk)
    with pytest.raises(EngineError) as exc:
        place_bets(s1, [(2, "main", D("10"))])
    assert exc.value.code == "bets_closed"
    with pytest.raises(EngineError):
        writer.close_bets(round.pk)


def test_stakes_the_credits_cannot_cover_are_refused_before_anything_is_written(table):
    s1 = seated(table, "s1", "15")
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("10"))])
    # Credits fall under the stakes after the bet (a correction of an earlier round, say):
    # closing bets checks them again and takes that station's bets off (issue 17: one
    # station's bets never block the table); with no other bet, betting stays open.
    debit = ledger.CashKey(s1.pk, LedgerEntry.Kind.CASH_OUT, "correction")
    ledger.post(s1, None, LedgerEntry.Kind.CASH_OUT, D("-10"), debit)
    assert writer.close_bets(round.pk) == []
    round.refresh_from_db()
    assert round.phase == Round.Phase.BETTING and round.step_key == "betting:1"
    assert not round.bets.exists()
    assert RoundEvent.objects.count() == 0
    assert ledger.balance(s1) == D("5.00")


def test_the_server_assigns_the_in_for_6_multipliers_and_logs_them_before_the_pick(table):
    TableConfig.objects.filter(table=table).update(
        special_bets={"in_for_6": {"hard_6_mixed": [30, 60, 100]}}
    )
    s1 = seated(table, "s1", "100")
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", D("10"))])
    place_bets(s1, [(1, "in_for_6", D("1"))])
    writer.close_bets(round.pk)
    notices = []
    for card in "3S 9C 3D".split():
        notices += writer.record(round.pk, CardDrawn(parse_card(card)))
    notices += writer.record(round.pk, CardDrawn(parse_card("7D")))  # a mixed hard 6
    logged = RoundEvent.objects.get(round=round, kind="bonus_assigned").payload
    assert sorted(map(Decimal, logged["multipliers"])) == [30, 60, 100]
    assert not any("multipliers" in repr(n.message) for n in notices)  # hidden until the pick
    notices = writer.record(round.pk, Decision("s1", "pick_3"))
    picked = Decimal(logged["multipliers"][2])
    bonus = next(n.message for n in notices if n.message.get("type") == "bonus")
    assert bonus["returned"] == f"{picked + 1:.2f}"
    assert ledger.balance(s1) == D("89.00") + picked + 1
