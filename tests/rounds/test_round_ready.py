"""A round whose bets closed in another process (a Celery worker's timer, another server
process) is made ready in every server process with sockets at its table before its first
card: the card does not wait for a replay of the round (tablehub/fanout.py,
``on_round_ready``)."""

import asyncio
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from prometheus_client import REGISTRY

from rounds import writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub import fanout
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import consumers_connection_closed  # noqa: F401 (autouse, see there)

pytestmark = pytest.mark.django_db(transaction=True)


class QuietSocket:
    """A station's socket at the table, whose frames nobody reads here."""

    def deliver_now(self, outgoing) -> bool:
        return True

    async def deliver(self, text: str) -> None:
        pass

    async def close(self, code: int | None = None) -> None:
        pass


def replayed() -> float:
    """How many round engines this process has replayed whole so far."""
    return REGISTRY.get_sample_value("tablehub_round_engines_total", {"how": "replayed"}) or 0.0


def a_round_with_bets() -> tuple[int, int]:
    jurisdiction = Jurisdiction.objects.create(code="rr", name="Round ready")
    table = Table.objects.create(name="ready", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    round = writer.open_round(table)
    for name in ("s1", "s2"):
        station = Station.objects.create(table=table, name=name)
        cash_in(station, "100", key="start")
        place_bets(station, [(1, "main", Decimal("10"))])
    return table.pk, round.pk


def close_bets_as_another_process(round_id: int) -> None:
    writer.close_bets(round_id)
    writer.forget_cached_engines()  # the engine it built is that process's, not ours


async def test_a_round_closed_elsewhere_is_ready_before_its_first_card(settings):
    settings.TABLEHUB_ROUND_READY = True
    table_id, round_id = await database_sync_to_async(a_round_with_bets)()
    socket = QuietSocket()
    hub = await fanout.join(socket, table_id, get_channel_layer(), "s1")
    try:
        before = replayed()
        await database_sync_to_async(close_bets_as_another_process)(round_id)
        for _ in range(100):  # the hub heard that the bets closed and made the round ready
            if replayed() > before:
                break
            await asyncio.sleep(0.05)
        assert replayed() == before + 1
        # The dealer's first card finds the engine here: no replay waits in front of it.
        await database_sync_to_async(writer.record)(round_id, CardDrawn(parse_card("5S")))
        assert replayed() == before + 1
    finally:
        hub.remove(socket)
