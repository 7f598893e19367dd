"""Video mode: no dealer; the virtual shoe deals by itself and rounds follow each other on
the betting timer. Timers run for real here (thread timers, as in a management command)."""

import time
from decimal import Decimal

import pytest

from croupier.video import deal_video_card
from payouts import ledger
from rounds import writer
from rounds.engine import RuleSet
from rounds.models import Hand, Round
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def video_table(settings):
    settings.TABLEHUB_TIMERS = "inprocess"
    jurisdiction = Jurisdiction.objects.create(code="video", name="Video")
    table = Table.objects.create(
        name="video", jurisdiction=jurisdiction, mode=Table.Mode.VIDEO, is_open=True
    )
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=6).to_dict(),
        timers={"betting": 0.3, "decision": 0.3, "insurance": 0.3, "video_card": 0.01},
    )
    cash_in(Station.objects.create(table=table, name="s1"), "100", key="start")
    yield table
    settings.TABLEHUB_TIMERS = "none"  # nothing more is scheduled behind the test's back
    time.sleep(0.5)  # let a timer thread in flight finish before the database is flushed


def wait_for(predicate, limit=20.0):
    """Poll the database until ``predicate()`` holds (bounded: timers run in threads)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the video table")


def test_a_video_round_plays_and_settles_and_the_next_one_opens_by_itself(video_table):
    station = video_table.stations.get(name="s1")
    first = writer.open_round(video_table)
    place_bets(station, [(1, "main", Decimal("10"))])
    # Nobody closes bets, deals or answers: the timers and the virtual shoe do it all.
    settled = wait_for(lambda: Round.objects.filter(pk=first.pk, phase="settled").first())
    hands = list(Hand.objects.filter(round=settled))
    assert len(hands) >= 1 and all(len(h.cards) >= 2 for h in hands)
    staked = sum(h.stake for h in hands) + sum(h.insurance or 0 for h in hands)
    returned = sum(h.returned for h in hands) + sum(h.insurance_returned or 0 for h in hands)
    assert ledger.balance(station) == Decimal("100") - staked + returned
    nxt = wait_for(lambda: video_table.rounds.exclude(pk=first.pk).first())
    assert nxt.phase == Round.Phase.BETTING  # rounds follow each other on the betting timer


def test_a_stale_video_job_deals_nothing(video_table, settings):
    settings.TABLEHUB_TIMERS = "none"  # deal by hand: nothing scheduled behind the test
    station = video_table.stations.get(name="s1")
    round = writer.open_round(video_table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    round.refresh_from_db()
    seq = round.last_seq
    deal_video_card(round.pk, seq)  # the job the close of bets scheduled: deals box 1
    deal_video_card(round.pk, seq)  # the same job again (a retried task): nothing
    round.refresh_from_db()
    assert round.last_seq == seq + 1
    assert list(round.events.values_list("kind", flat=True)) == ["bets_closed", "card"]
