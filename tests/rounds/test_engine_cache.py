"""The writer's engine cache never shows a state that is not committed (rounds/writer.py).

One thread applies inputs, each in a transaction that stays open a moment after the input
is applied (so an uncommitted engine exists for a while) and that sometimes rolls back; the
other thread reads the round's engine as fast as it can. Every state the reader sees must
be one the database committed: a card of a rolled-back transaction is never seen, and the
cards seen are always a prefix of the round's committed cards."""

import threading
import time
from decimal import Decimal

import pytest
from django.db import connection, transaction

from rounds import writer
from rounds.engine import CardDrawn, Decision, RuleSet, parse_card
from rounds.models import Round
from rounds.replay import rebuild
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED_CARD = "3H"  # only ever applied in transactions that roll back
HIT_CARD = "2H"
OPEN_SECONDS = 0.004  # how long each writer transaction stays open after its input


class RolledBack(Exception):
    pass


def betting_round() -> Round:
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=8).to_dict())
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "100", key="start")
    round = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    return round


def apply(round_id: int, event, commit: bool) -> None:
    try:
        with transaction.atomic():
            writer.record(round_id, event)
            time.sleep(OPEN_SECONDS)  # the new engine exists, uncommitted
            if not commit:
                raise RolledBack
    except RolledBack:
        pass


def test_a_reader_never_sees_an_engine_that_is_not_committed():
    round = betting_round()
    seen: list[tuple[str, ...]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            for card in ("2C", "9D", "2D", "7S"):  # box 1: 2 2, dealer 9 up, hole 7
                apply(round.pk, CardDrawn(parse_card(REFUSED_CARD)), commit=False)
                apply(round.pk, CardDrawn(parse_card(card)), commit=True)
            for _ in range(7):  # hit to 2 x 9 = 18
                apply(round.pk, Decision("s1", "hit"), commit=True)
                apply(round.pk, CardDrawn(parse_card(REFUSED_CARD)), commit=False)
                apply(round.pk, CardDrawn(parse_card(HIT_CARD)), commit=True)
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)
        finally:
            done.set()
            connection.close()

    def read() -> None:
        try:
            while not done.is_set():
                seen.append(writer.read(round.pk, lambda e: tuple(str(c) for c in e.drawn)))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=write), threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    committed = tuple(str(c) for c in rebuild(Round.objects.get(pk=round.pk)).drawn)
    assert committed == ("2C", "9D", "2D", "7S") + (HIT_CARD,) * 7
    assert len(seen) > 20  # the reader really read while the writer wrote
    assert all(state == committed[: len(state)] for state in seen)  # committed prefixes only
    assert not any(REFUSED_CARD in state for state in seen)
    assert writer.state(round.pk).seats["s1"].hands[0].cards[-1].text == HIT_CARD
