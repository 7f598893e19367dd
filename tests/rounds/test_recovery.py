"""After a restart the embedded server arms its timers again from the stored deadlines."""

import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from rounds import writer
from rounds.engine import RuleSet
from rounds.models import Round
from rounds.recovery import resume_tables
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db(transaction=True)


def make_table(name, **fields):
    jurisdiction, _ = Jurisdiction.objects.get_or_create(code="j", defaults={"name": "J"})
    table = Table.objects.create(name=name, jurisdiction=jurisdiction, **fields)
    timers = {"betting": 30, "decision": 30, "video_card": 0.05}
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict(), timers=timers)
    cash_in(Station.objects.create(table=table, name="s1"), "50", key="start")
    return table


def wait_for(predicate, limit=10.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_deadline_that_passed_while_the_server_was_down_fires_at_once(settings):
    table = make_table("t1")
    round = writer.open_round(table)  # settings: timers "none", as when the process died
    place_bets(table.stations.get(), [(1, "main", Decimal("5"))])
    Round.objects.filter(pk=round.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    settings.TABLEHUB_TIMERS = "inprocess"
    done = resume_tables()
    assert done == {"timers": 1, "video_cards": 0, "rounds_opened": 0}
    assert wait_for(lambda: Round.objects.get(pk=round.pk).phase == Round.Phase.DEAL)
    assert resume_tables()["timers"] == 0  # bets closed, no step waits for a timer now


def test_an_open_table_without_a_round_gets_one_and_a_closed_one_does_not(settings):
    open_table = make_table("open", is_open=True)
    closed_table = make_table("closed")
    settings.TABLEHUB_TIMERS = "none"
    assert resume_tables()["rounds_opened"] == 1
    assert open_table.rounds.get().phase == Round.Phase.BETTING
    assert not closed_table.rounds.exists()
    assert resume_tables()["rounds_opened"] == 0  # idempotent: the round is there now


def test_a_video_round_waiting_for_a_card_gets_it(settings):
    table = make_table("video", mode=Table.Mode.VIDEO)
    round = writer.open_round(table)
    place_bets(table.stations.get(), [(1, "main", Decimal("5"))])
    writer.close_bets(round.pk)  # timers "none": the card job died with the process
    settings.TABLEHUB_TIMERS = "inprocess"
    assert resume_tables()["video_cards"] == 1
    assert wait_for(lambda: Round.objects.get(pk=round.pk).events.filter(kind="card").exists())
    settings.TABLEHUB_TIMERS = "none"  # no further card jobs; let the one in flight finish
    time.sleep(0.5)
