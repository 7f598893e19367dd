"""Several server processes serving one table take turns on its round (issue 16, scale out).
A process whose cached engine is behind, because another process wrote the round since,
brings it up to date with just the events in between (``replay.catch_up``), unless a
correction is among them: the round then plays, and its money is written, exactly as the
whole log says (rounds/writer.py, "The engine cache").

The other process is real: ``manage.py shell`` on the test database, with an engine cache
of its own."""

from decimal import Decimal

import pytest
from django.db.models import Sum
from prometheus_client import REGISTRY

from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import CardDrawn, Decision, RuleSet, parse_card
from rounds.models import Round, RoundEvent
from rounds.replay import rebuild
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import django_shell, server_env

pytestmark = pytest.mark.django_db(transaction=True)

# Boxes 1, 2, 3 (s1, s2, s3): 9 7 (16), T 8 (18), 5 6 (11); the dealer T up, 7 in the hole.
DEAL = ["9C", "TC", "5H", "TS", "7D", "8D", "6S", "7H"]


def another_process(code: str) -> None:
    """``code`` run by a process of its own on the test database (its own engine cache)."""
    env = server_env(TABLEHUB_TIMERS="none")  # it writes; the test fires no timer
    imports = "from rounds import writer; from rounds.engine import *; "
    django_shell(env, imports + code)


def engines(how: str) -> float:
    """This process's count of round engines built ``how`` (tablehub/metrics.py)."""
    return REGISTRY.get_sample_value("tablehub_round_engines_total", {"how": how}) or 0.0


def dealt_round() -> Round:
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=8).to_dict())
    round = writer.open_round(table)
    for box, name in enumerate(("s1", "s2", "s3"), start=1):
        station = Station.objects.create(table=table, name=name)
        cash_in(station, "100.00", key="start")
        place_bets(station, [(box, "main", Decimal("10.00"))])
    writer.close_bets(round.pk)
    for card in DEAL:
        writer.record(round.pk, CardDrawn(parse_card(card)))
    return round


def credits(name: str) -> Decimal:
    return LedgerEntry.objects.filter(station__name=name).aggregate(total=Sum("amount"))["total"]


def test_an_engine_behind_another_processs_events_catches_up_and_writes_no_money_twice():
    round = dealt_round()  # this process's cache holds the round's engine
    assert set(writer.state(round.pk).prompted_stations) == {"s1", "s2", "s3"}
    # Another process: s1 doubles (a stake of 10 more, written by that process) on a 4.
    another_process(f"writer.record({round.pk}, Decision('s1', 'double'))")
    caught_up, replayed = engines("caught_up"), engines("replayed")

    writer.record(round.pk, Decision("s2", "stand"))  # this process, an event behind
    assert (engines("caught_up"), engines("replayed")) == (caught_up + 1, replayed)
    writer.record(round.pk, Decision("s3", "double"))
    # Common draw: one card for both doubles, box 1 20, box 3 15; the dealer stands on 17.
    writer.record(round.pk, CardDrawn(parse_card("4C")))

    round.refresh_from_db()
    assert round.phase == "settled"
    # The round as its log alone gives it: every hand and the money of each station.
    engine, logged = writer.state(round.pk), rebuild(round)
    for name in ("s1", "s2", "s3"):
        assert engine.money_items(name) == logged.money_items(name)
        hands = [[c.text for c in hand.cards] for hand in engine.seats[name].hands]
        assert hands == [[c.text for c in hand.cards] for hand in logged.seats[name].hands]
    assert [c.text for c in engine.seats["s1"].hands[0].cards] == ["9C", "7D", "4C"]
    # s1 doubled to 20 (stake 20, paid 40), s2 stood on 18 (paid 20), s3 doubled to 15 and
    # lost 20: the other process's double written once, by it, and not again by this one.
    assert (credits("s1"), credits("s2"), credits("s3")) == (
        Decimal("120.00"),
        Decimal("110.00"),
        Decimal("80.00"),
    )
    assert engines("replayed") == replayed


def test_a_correction_by_another_process_makes_the_engine_replay_the_whole_log():
    round = dealt_round()
    # Another process corrects the hole card (7H read as 6H: the dealer has 16, not 17).
    hole = RoundEvent.objects.filter(round=round, kind=RoundEvent.Kind.CARD).order_by("seq").last()
    another_process(
        "from rounds import corrections;"
        f"corrections.correct_cards({round.pk}, [{{'seq': {hole.seq}, 'card': '6H'}}], by='sup')"
    )
    caught_up, replayed = engines("caught_up"), engines("replayed")
    writer.record(round.pk, Decision("s1", "stand"))
    assert (engines("caught_up"), engines("replayed")) == (caught_up, replayed + 1)
    assert [card.text for card in writer.state(round.pk).dealer] == ["TS", "6H"]
