"""stations/retention.py: stored replies older than TABLEHUB_KEEP_REPLIES_HOURS are deleted,
oldest first, in chunks of ids; the younger ones still answer a resent message."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from payouts import ledger
from stations import retention
from stations.commands import handle
from stations.models import Station, StationCommand
from tablehub.models import Jurisdiction, Table

pytestmark = pytest.mark.django_db


@pytest.fixture
def station():
    jurisdiction = Jurisdiction.objects.create(code="nv", name="Nevada")
    table = Table.objects.create(name="t", jurisdiction=jurisdiction)
    station = Station(table=table, name="s1")
    station.set_credential("secret")
    station.save()
    return station


def replies(station: Station, hours_ago: list[float]) -> list[int]:
    """Stored replies made ``hours_ago`` (in id order), as the server stores them."""
    now = timezone.now()
    ids = []
    for n, hours in enumerate(hours_ago):
        command = StationCommand.objects.create(
            station=station, client_id=f"c{n}", reply={"type": "reply", "n": n}
        )
        StationCommand.objects.filter(pk=command.pk).update(created_at=now - timedelta(hours=hours))
        ids.append(command.pk)
    return ids


def test_replies_older_than_the_setting_are_forgotten(station, settings):
    settings.TABLEHUB_KEEP_REPLIES_HOURS = 24
    ids = replies(station, [50, 30, 24.5, 23.5, 1, 0])
    assert retention.forget_old_replies() == 3
    assert sorted(StationCommand.objects.values_list("pk", flat=True)) == ids[3:]
    assert retention.forget_old_replies() == 0


def test_a_kept_reply_still_answers_its_resend(station, settings):
    settings.TABLEHUB_KEEP_REPLIES_HOURS = 24
    sent = {"type": "state", "client_id": "kept"}
    reply = handle(station, sent)
    assert reply["ok"], reply
    assert StationCommand.objects.filter(client_id="kept").exists()
    retention.forget_old_replies()
    again = handle(station, sent)
    assert again == reply | {"resent": True}


def test_many_old_replies_go_in_chunks_of_ids(station, settings, monkeypatch):
    settings.TABLEHUB_KEEP_REPLIES_HOURS = 1
    monkeypatch.setattr(retention, "CHUNK", 3)
    ids = replies(station, [5] * 10 + [0.5] * 2)
    assert retention.forget_old_replies() == 10
    assert list(StationCommand.objects.order_by("pk").values_list("pk", flat=True)) == ids[10:]


def test_a_sweep_with_nothing_to_forget_is_one_read(station, settings, django_assert_num_queries):
    settings.TABLEHUB_KEEP_REPLIES_HOURS = 24
    replies(station, [2, 1])
    with django_assert_num_queries(1):
        assert retention.forget_old_replies() == 0
    assert StationCommand.objects.count() == 2


def test_celery_beat_sends_the_retention_sweep():
    entry = django_settings.CELERY_BEAT_SCHEDULE["forget-old-replies"]
    assert entry["task"] == "stations.tasks.forget_replies"
    assert entry["schedule"] == django_settings.TABLEHUB_REPLIES_SWEEP_SECONDS


def test_a_cash_in_sent_again_after_its_reply_is_forgotten_adds_nothing(station, settings):
    sent = {"type": "cash_in", "client_id": "cash-1", "amount": "40.00"}
    assert handle(station, sent)["ok"]
    settings.TABLEHUB_KEEP_REPLIES_HOURS = 0
    assert retention.forget_old_replies() == 1
    handle(station, sent)  # handled as new: the ledger's key keeps it from counting twice
    assert ledger.balance(station) == Decimal("40.00")
