"""Stale games (rounds/stale.py): a round that cannot finish is cancelled and refunded once
its jurisdiction's stale_game_hours have passed since its last activity; by Celery beat in
production and on the embedded server's own loop."""

import json
import os
import signal
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.db.models import Sum
from django.utils import timezone
from websockets.sync.client import connect

from bench.loopback import start_daphne
from payouts import ledger
from payouts.models import LedgerEntry
from rounds import recovery, stale, tasks, writer
from rounds.engine import CardDrawn, Decision, RuleSet, parse_card
from rounds.models import Round, RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.celery import app
from tablehub.loopback import free_port, wait_for_port
from tablehub.models import Jurisdiction, Table, TableConfig

D = Decimal
REASON = "stale game: not finished within 24 hours"


def make_table(name="t1", hours=24, **fields):
    jurisdiction = Jurisdiction.objects.create(code=f"j-{name}", name=name, stale_game_hours=hours)
    table = Table.objects.create(name=name, jurisdiction=jurisdiction, **fields)
    TableConfig.objects.create(
        table=table, version=1, rules=RuleSet(decks=6).to_dict(), timers={"betting": 20}
    )
    for station in ("s1", "s2"):
        cash_in(Station.objects.create(table=table, name=station), "100", key="start")
    return table


def stuck(table, cards="TS 9H AC 6D 8S"):
    """A round whose dealer went away mid-deal: bets taken, some cards out."""
    round = writer.open_round(table)
    place_bets(table.stations.get(name="s1"), [(1, "main", D("10"))])
    place_bets(table.stations.get(name="s2"), [(2, "main", D("25"))])
    writer.close_bets(round.pk)
    for card in cards.split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    round.refresh_from_db()
    return round


def idle_for(round, hours):
    """Make the round's last activity ``hours`` old."""
    then = timezone.now() - timedelta(hours=hours)
    Round.objects.filter(pk=round.pk).update(created_at=then)
    RoundEvent.objects.filter(round=round).update(created_at=then)


def credits(table, name):
    return ledger.balance(table.stations.get(name=name))


@pytest.mark.django_db
def test_a_round_idle_past_the_limit_is_voided_and_refunded_once():
    table = make_table()
    round = stuck(table, "TS 9H AC 6D 8S 5C")  # the insurance step: s1 insures, then nothing
    writer.record(round.pk, Decision("s1", "insure"))
    assert (credits(table, "s1"), credits(table, "s2")) == (D("85.00"), D("75.00"))
    idle_for(round, 23.9)
    assert stale.void_stale_rounds() == []  # not yet
    idle_for(round, 24.1)
    assert stale.void_stale_rounds() == [round.pk]
    round.refresh_from_db()
    assert round.phase == Round.Phase.VOID
    assert (round.step_key, round.deadline) == ("", None)
    void = round.events.get(kind="void")
    assert void.payload == {"by": "system", "reason": REASON, "requested_by": ""}
    assert (credits(table, "s1"), credits(table, "s2")) == (D("100.00"), D("100.00"))
    assert LedgerEntry.objects.filter(round=round).aggregate(t=Sum("amount"))["t"] == 0
    entries = LedgerEntry.objects.count()
    assert stale.void_stale_rounds() == []  # idempotent
    assert tasks.void_stale_games() == []  # the beat task is the same service
    assert LedgerEntry.objects.count() == entries


@pytest.mark.django_db
def test_recent_activity_keeps_an_old_round_alive():
    table = make_table()
    round = stuck(table, "TS 9H")
    idle_for(round, 30)
    writer.record(round.pk, CardDrawn(parse_card("7C")))  # the dealer is back
    assert stale.void_stale_rounds() == []
    assert Round.objects.get(pk=round.pk).phase == Round.Phase.DEAL


@pytest.mark.django_db
def test_betting_rounds_are_cancelled_only_with_bets_on_them():
    empty = make_table("empty")
    with_bets = make_table("bets")
    nobody = writer.open_round(empty)
    bet_on = writer.open_round(with_bets)  # its timer died: bets were never closed
    place_bets(with_bets.stations.get(name="s1"), [(1, "main", D("10"))])
    idle_for(nobody, 48)
    idle_for(bet_on, 48)
    assert stale.void_stale_rounds() == [bet_on.pk]
    assert Round.objects.get(pk=nobody.pk).phase == Round.Phase.BETTING
    assert credits(with_bets, "s1") == D("100.00")  # nothing had been taken


@pytest.mark.django_db
def test_each_jurisdiction_has_its_own_limit_and_0_cancels_nothing():
    short = stuck(make_table("short", hours=2))
    long = stuck(make_table("long", hours=72))
    never = stuck(make_table("never", hours=0))
    for round in (short, long, never):
        idle_for(round, 3)
    assert stale.void_stale_rounds() == [short.pk]
    assert short.events.get(kind="void").payload["reason"] == (
        "stale game: not finished within 2 hours"
    )
    for round in (long, never):
        idle_for(round, 1000)
    assert stale.void_stale_rounds() == [long.pk]
    assert Round.objects.get(pk=never.pk).phase == Round.Phase.DEAL


@pytest.mark.django_db
def test_settled_and_void_rounds_are_left_alone():
    table = make_table()
    settled = stuck(table, "TS 9H 7C 6D 8S TC")
    writer.record(settled.pk, Decision("s1", "stand"))
    writer.record(settled.pk, Decision("s2", "stand"))
    assert Round.objects.get(pk=settled.pk).phase == Round.Phase.SETTLED
    idle_for(settled, 100)
    assert stale.void_stale_rounds() == []


@pytest.mark.django_db(transaction=True)
def test_an_open_table_goes_on_with_a_new_round():
    table = make_table(is_open=True)
    round = stuck(table)
    idle_for(round, 25)
    assert stale.void_stale_rounds() == [round.pk]
    assert table.rounds.exclude(pk=round.pk).get().phase == Round.Phase.BETTING


@pytest.mark.django_db
def test_a_server_back_after_the_limit_cancels_before_it_carries_on():
    table = make_table()
    round = stuck(table, "TS 9H AC 6D 8S 5C")  # the insurance step, its deadline long past
    idle_for(round, 25)
    assert recovery.resume_tables()["timers"] == 0  # voided first: no timer armed for it
    assert Round.objects.get(pk=round.pk).phase == Round.Phase.VOID
    assert credits(table, "s2") == D("100.00")


def test_celery_beat_sends_both_sweeps():
    schedule = django_settings.CELERY_BEAT_SCHEDULE
    tasks_by_name = {entry["task"]: entry for entry in schedule.values()}
    assert tasks_by_name["rounds.tasks.void_stale_games"]["schedule"] == 600
    assert tasks_by_name["rounds.tasks.sweep_timers"]["schedule"] == 2
    app.loader.import_default_modules()
    assert set(tasks_by_name) <= set(app.tasks)
    assert app.conf.beat_schedule == schedule


# -- the embedded server runs the sweep on its own loop ---------------------------------------


def test_the_embedded_server_cancels_a_stale_game_by_itself(transactional_db):
    table = make_table(is_open=True)
    station = table.stations.get(name="s1")
    station.set_credential("s1")
    station.save()
    round = stuck(table)
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        url = f"sqlite:///{db['NAME']}"
    else:
        url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "DATABASE_URL": url,
        "TABLEHUB_TIMERS": "inprocess",
        "TABLEHUB_STALE_SWEEP_SECONDS": "1",
        "DJANGO_SETTINGS_MODULE": "tablehub.settings",
    }
    port = free_port()
    server = start_daphne(port, env)
    try:
        wait_for_port(port, limit=30, process=server)
        with connect(
            f"ws://127.0.0.1:{port}/ws/tables/{table.pk}/station/",
            origin="http://127.0.0.1",
            open_timeout=10,
        ) as ws:
            join = {"type": "join", "client_id": "j", "station": "s1", "credential": "s1"}
            ws.send(json.dumps(join))
            state = reply_to(ws, "j")["state"]
            assert state["round"]["id"] == round.pk and state["credits"] == "90.00"
            idle_for(round, 25)  # the dealer has been gone for a day: the next sweep acts
            frame = next_frame(ws, lambda f: f.get("event", {}).get("type") == "void", 15)
            assert frame["event"]["reason"] == REASON
            ws.send(json.dumps({"type": "state", "client_id": "s"}))
            assert reply_to(ws, "s")["state"]["credits"] == "100.00"
        assert Round.objects.get(pk=round.pk).phase == Round.Phase.VOID
        assert table.rounds.filter(phase=Round.Phase.BETTING).exists()  # the table goes on
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)


def next_frame(ws, test, limit=10.0):
    """The next frame that passes ``test``, within ``limit`` seconds."""
    end = time.monotonic() + limit
    while (left := end - time.monotonic()) > 0:
        frame = json.loads(ws.recv(timeout=left))
        if test(frame):
            return frame
    raise AssertionError(f"no such frame within {limit} s")


def reply_to(ws, client_id):
    return next_frame(ws, lambda f: f.get("type") == "reply" and f.get("client_id") == client_id)
