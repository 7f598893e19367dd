"""The virtual shoe deals a secure shuffle through the reader's input; rounds follow rounds."""

from decimal import Decimal

import pytest

from croupier.virtual_shoe import deal_next
from rounds import writer
from rounds.engine import RuleSet, Timeout
from rounds.models import Round
from rounds.replay import rebuild
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db


def test_a_round_dealt_by_the_virtual_shoe_then_the_next_round_opens(
    django_capture_on_commit_callbacks,
):
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction, is_open=True)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "100", key="start")
    round = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.expire(round.pk, "betting")
    with django_capture_on_commit_callbacks(execute=True):  # the next round opens on commit
        for _ in range(200):
            round.refresh_from_db()
            if round.phase == Round.Phase.SETTLED:
                break
            engine = writer.state(round.pk)
            if engine.awaiting_card:
                deal_next(table)
            else:
                writer.record(round.pk, Timeout())
    assert round.phase == Round.Phase.SETTLED
    engine = rebuild(round)
    dealt = [str(c) for c in engine.drawn]
    assert len(dealt) == len(set(dealt))  # one deck: every card once
    next_round = table.rounds.order_by("-pk").first()
    assert next_round.pk != round.pk and next_round.phase == Round.Phase.BETTING
