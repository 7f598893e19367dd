"""Abandoned hands at a live table (payouts/maingame/abandoned.py, rounds/writer.py): where
the jurisdiction asks for basic strategy, the step's timeout makes each unanswered play
decision by the chart of the round's rules, logged as automatic and shown so by recall; by
default the table's timeout action answers, as before. The shoe is the golden rounds'
(tests/scenarios/abandoned_hands_*.json)."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone

from payouts import ledger
from payouts.maingame import abandoned
from payouts.specials import parse_paytables
from rounds import writer
from rounds.engine import CardDrawn, EngineError, RuleSet, parse_card, play_scenario
from rounds.models import Round, RoundEvent
from rounds.recall import recall
from stations import protection
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def table_with(rule: str) -> tuple[Table, Station]:
    jurisdiction = Jurisdiction.objects.create(code="ab", name="Abandoned", abandoned_hands=rule)
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction, boxes=3)
    TableConfig.objects.create(
        table=table, version=1, rules=RuleSet(decks=8).to_dict(), limits={"main": ["1", "100"]}
    )
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "100", key="start")
    return table, station


def deal(round: Round, cards: str) -> None:
    for card in cards.split():
        writer.record(round.pk, CardDrawn(parse_card(card)))


def time_out(round: Round) -> None:
    round.refresh_from_db()
    writer.expire(round.pk, round.step_key)


@pytest.mark.django_db
def test_basic_strategy_plays_the_abandoned_hands_and_recall_marks_them_automatic():
    table, station = table_with("basic_strategy")
    round = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10")), (2, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    deal(round, "5H TC 3C 6D 2D TS")  # box 1: 11, box 2: 12; the dealer's 3 up
    time_out(round)  # the chart doubles 11 against 3; box 1 asks for its card
    deal(round, "4H")
    time_out(round)  # the chart hits 12 against 3
    deal(round, "9S 9H")  # box 2: 21; the dealer's 13 draws 9H: bust
    round.refresh_from_db()
    assert round.phase == Round.Phase.SETTLED
    assert ledger.balance(station) == Decimal("130.00")  # as the golden round says

    logged = [e.payload for e in round.events.filter(kind=RoundEvent.Kind.DECISION)]
    assert logged == [
        {"station": "s1", "action": "double", "hand": "s1/1/1", "automatic": True},
        {"station": "s1", "action": "hit", "hand": "s1/2/2", "automatic": True},
    ]
    assert not round.events.filter(kind=RoundEvent.Kind.TIMEOUT).exists()
    shown = recall(round)
    assert [(d["action"], d["by"]) for d in shown["decisions"]] == [
        ("double", "strategy"),
        ("hit", "strategy"),
    ]
    # the floor manager's report counts the hands completed automatically
    hour = timedelta(hours=1)
    report = protection.report(table.pk, timezone.now() - hour, timezone.now() + hour)
    assert report["automatic_hands"] == 2 and report["automatic_decisions"] == 2
    writer.forget_cached_engines()  # the log alone replays to the same round
    assert writer.state(round.pk).settlement("s1")["credits"] == "130.00"


@pytest.mark.django_db
def test_by_default_the_tables_timeout_action_answers_as_before():
    table, station = table_with("timeout")
    round = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10")), (2, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    deal(round, "5H TC 3C 6D 2D TS")
    time_out(round)  # stands on 11 and 12
    deal(round, "4H")  # the dealer's 17
    round.refresh_from_db()
    assert round.phase == Round.Phase.SETTLED
    assert ledger.balance(station) == Decimal("80.00")
    assert not round.events.filter(kind=RoundEvent.Kind.DECISION).exists()
    assert [t["by"] for t in recall(round)["timeouts"]] == ["timer"]


def test_a_scenario_names_its_abandoned_hands_rule_or_is_refused():
    data = json.loads((SCENARIOS / "abandoned_hands_basic_strategy.json").read_text())
    with pytest.raises(EngineError, match="needs its strategy"):
        play_scenario(data, parse_paytables)  # the engine alone knows no chart
    with pytest.raises(EngineError, match='abandoned_hands must be "timeout" or "basic_strategy"'):
        play_scenario(data | {"abandoned_hands": "walk"}, parse_paytables, abandoned.for_scenario)
    outcome = play_scenario(data, parse_paytables, abandoned.for_scenario)
    assert outcome["stations"]["s1"]["credits"] == "130.00"
