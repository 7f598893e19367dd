"""Timers are deadlines on the round: expiry is idempotent, and a late command expires first."""

import asyncio
import gc
import threading
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from rounds import tasks, timers, writer
from rounds.engine import CardDrawn, Decision, EngineError, RuleSet, parse_card
from rounds.models import Round, RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(
        code="wa", name="Washington", max_decision_seconds=25
    )
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(
        table=table, version=1, rules=RuleSet().to_dict(), timers={"betting": 10, "decision": 40}
    )
    for name in ("s1", "s2"):
        cash_in(Station.objects.create(table=table, name=name), "100", key="start")
    return table


def in_play(table):
    round = writer.open_round(table)
    for station in table.stations.all():
        place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in "5S 9C 6D 7D".split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    round.refresh_from_db()
    return round


def test_betting_deadline_closes_bets_once(table):
    round = writer.open_round(table)
    assert round.step_key == "betting"
    assert timedelta(seconds=9) < round.deadline - timezone.now() <= timedelta(seconds=10)
    place_bets(table.stations.get(name="s1"), [(1, "main", Decimal("10"))])
    writer.expire(round.pk, "betting")
    writer.expire(round.pk, "betting")  # a second firing of the same timer does nothing
    round.refresh_from_db()
    assert round.phase == Round.Phase.DEAL
    assert list(round.events.values_list("kind", flat=True)) == ["bets_closed"]


def test_decision_deadline_is_capped_by_the_jurisdiction(table):
    round = in_play(table)
    assert round.step_key == "play:1"
    assert round.deadline - timezone.now() <= timedelta(seconds=25)  # 40 asked, 25 allowed


def test_expiry_applies_the_timeout_default_once(table):
    round = in_play(table)
    writer.record(round.pk, Decision("s1", "hit"))
    writer.expire(round.pk, "play:1")  # s2 stands by default; the step closes
    writer.expire(round.pk, "play:1")
    kinds = list(RoundEvent.objects.filter(round=round).values_list("kind", flat=True))
    assert kinds.count("timeout") == 1
    engine = writer.state(round.pk)
    assert engine.seats["s2"].hands[0].finished
    assert engine.awaiting_card == "hands"  # s1's hit waits for the dealer's card


def test_a_command_after_the_deadline_first_applies_the_expiry(table):
    round = in_play(table)
    Round.objects.filter(pk=round.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    with pytest.raises(EngineError) as exc:
        writer.record(round.pk, Decision("s1", "hit"))  # too late: s1 already stood
    assert exc.value.code == "not_your_turn"
    assert writer.state(round.pk).seats["s1"].hands[0].finished  # the expiry was kept


def test_a_bet_after_the_betting_deadline_is_refused(table):
    round = writer.open_round(table)
    s1 = table.stations.get(name="s1")
    place_bets(s1, [(1, "main", Decimal("10"))])
    Round.objects.filter(pk=round.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    with pytest.raises(EngineError) as exc:
        place_bets(s1, [(2, "main", Decimal("10"))])
    assert exc.value.code == "bets_closed"
    round.refresh_from_db()
    assert round.phase == Round.Phase.DEAL and round.bets.count() == 1


def test_an_empty_betting_window_starts_again_instead_of_blocking_the_table(table):
    round = writer.open_round(table)
    writer.expire(round.pk, "betting")  # nobody bet
    round.refresh_from_db()
    assert round.phase == Round.Phase.BETTING and round.step_key == "betting:1"
    assert round.deadline > timezone.now()
    writer.expire(round.pk, "betting")  # the first window's timer, late: nothing happens
    s1 = table.stations.get(name="s1")
    place_bets(s1, [(1, "main", Decimal("10"))])
    writer.expire(round.pk, "betting:1")
    round.refresh_from_db()
    assert round.phase == Round.Phase.DEAL


@pytest.mark.django_db(transaction=True)
async def test_a_timer_that_fails_on_the_servers_loop_is_logged_not_left_in_its_task(
    settings, caplog
):
    """A timer fired on the server's event loop whose job fails is logged with its name and
    arguments, as one fired in a thread is; asyncio is left no task exception to report."""
    settings.TABLEHUB_TIMERS = "inprocess"
    loop = asyncio.get_running_loop()
    unretrieved: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    failed = asyncio.Event()

    def failing(round_id: int, step_key: str) -> None:
        loop.call_soon_threadsafe(failed.set)
        raise ValueError("the database is gone")

    timers.register("expire", failing, tasks.expire_step)
    try:
        # From a database thread of this loop, as the writer schedules: the loop keeps time.
        await database_sync_to_async(timers.schedule)(7, "play:1", timezone.now())
        await asyncio.wait_for(failed.wait(), timeout=5)
        for _ in range(20):  # the failed run's task finishes
            if "timer expire" in caplog.text:
                break
            await asyncio.sleep(0.05)
    finally:
        timers.register("expire", writer.expire, tasks.expire_step)
    gc.collect()  # an unretrieved task exception is reported when its task is collected
    await asyncio.sleep(0)
    assert "timer expire(7, 'play:1') failed" in caplog.text
    assert "the database is gone" in caplog.text
    assert unretrieved == []


@pytest.mark.django_db(transaction=True)
def test_a_timer_armed_before_a_pause_never_fires_after_the_resume(settings):
    """Timers are paused while a test's database is emptied (tests/conftest.py) and resumed
    for the next test: a timer the first test armed must not fire then, on the next test's
    rounds (seen in CI: an in-process server's betting timer after its database was gone).
    One armed after the resume fires."""
    settings.TABLEHUB_TIMERS = "inprocess"
    fired: list[tuple[int, str]] = []
    after_fired = threading.Event()

    def recording(round_id: int, step_key: str) -> None:
        fired.append((round_id, step_key))
        if step_key == "after":
            after_fired.set()

    timers.register("expire", recording, tasks.expire_step)
    try:
        timers.schedule(1, "before", timezone.now() + timedelta(seconds=0.3))
        assert timers.pause(wait=5)
        timers.resume()
        timers.schedule(2, "after", timezone.now() + timedelta(seconds=0.4))
        assert after_fired.wait(5)
        time.sleep(0.2)  # the first was due before the second
    finally:
        timers.register("expire", writer.expire, tasks.expire_step)
    assert fired == [(2, "after")]
