"""Prometheus metrics (docs/operations.md, "Metrics"): /metrics serves ours and
django-prometheus', and a round over real websockets moves them: decision latency, fan-out,
timer lateness and connected stations."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connections
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from rounds import writer
from rounds.engine import RuleSet
from rounds.models import Round
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.fuzz.support import connect
from tests.helpers import ask, drain


def scrape() -> dict[tuple[str, tuple], float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


@pytest.fixture
def table(transactional_db):
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    table.set_reader_key("reader-secret")
    table.save()
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    station = Station(table=table, name="s1")
    station.set_credential("s1-secret")
    station.save()
    cash_in(station, "100", key="start")
    return table


@pytest.mark.django_db(transaction=True)
async def test_metrics_move_after_a_round(table):
    db = database_sync_to_async
    before = await db(scrape)()
    here = (("table", str(table.pk)),)
    assert before.get(("tablehub_connected_stations", here), 0) == 0

    s1, frames = await connect(f"/ws/tables/{table.pk}/station/"), []
    joined = await ask(
        s1, frames, {"type": "join", "client_id": "j", "station": "s1", "credential": "s1-secret"}
    )
    assert joined["ok"]
    assert (await db(scrape)())[("tablehub_connected_stations", here)] == 1

    round = await db(writer.open_round)(table)
    assert (await ask(s1, frames, {"type": "place", "client_id": "b", "box": 1, "amount": "10"}))[
        "ok"
    ]
    # Time passes: the betting deadline is 2 s behind when its expiry is applied.
    await db(Round.objects.filter(pk=round.pk).update)(
        deadline=timezone.now() - timedelta(seconds=2)
    )
    await db(writer.expire)(round.pk, (await db(Round.objects.get)(pk=round.pk)).step_key)
    shoe = await connect(f"/ws/tables/{table.pk}/shoe/")
    await shoe.send_json_to({"type": "hello", "key": "reader-secret"})
    assert (await shoe.receive_json_from())["ok"]
    for seq, card in enumerate(["TS", "6C", "9D", "7H"], start=1):  # 19 against 13
        await shoe.send_json_to({"type": "card", "seq": seq, "card": card})
        assert (await shoe.receive_json_from())["ok"]
    await drain(s1, frames, 0.1)
    decided = await ask(s1, frames, {"type": "decide", "client_id": "d", "action": "stand"})
    assert decided["ok"], decided
    await s1.disconnect()
    await shoe.disconnect()

    after = await db(scrape)()
    decide = (("type", "decide"),)
    assert (
        after[("tablehub_station_message_seconds_count", decide)]
        == before.get(("tablehub_station_message_seconds_count", decide), 0) + 1
    )
    assert after[("tablehub_station_message_seconds_sum", decide)] > before.get(
        ("tablehub_station_message_seconds_sum", decide), 0
    )
    place = (("type", "place"),)
    assert after[("tablehub_station_message_seconds_count", place)] >= 1
    # every event the station got was one frame written by its process's table hub
    events = sum(1 for f in frames if f["type"] == "event")
    frames_before = before.get(("tablehub_fanout_frames_total", ()), 0)
    assert after[("tablehub_fanout_frames_total", ())] - frames_before >= events > 5
    assert after[("tablehub_fanout_seconds_count", ())] > before.get(
        ("tablehub_fanout_seconds_count", ()), 0
    )
    betting = (("step", "betting"),)
    late = after[("tablehub_timer_lateness_seconds_sum", betting)] - before.get(
        ("tablehub_timer_lateness_seconds_sum", betting), 0
    )
    assert 2 <= late < 10  # the expiry came some 2 s after the deadline
    assert after.get(("tablehub_connected_stations", here), 0) == 0  # gone with its socket
    assert ("django_http_requests_total_by_method_total", (("method", "GET"),)) in after
    await database_sync_to_async(connections.close_all)()
