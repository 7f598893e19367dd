"""The card reader: duplicates ignored, gaps and impossible cards refused, nothing changed."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from croupier.services import current_shoe, scan
from rounds import writer
from rounds.engine import EngineError, RuleSet
from rounds.models import Round, RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db


@pytest.fixture
def round():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "50", key="start")
    round = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    return round


def test_cards_in_sequence_duplicates_ignored(round):
    assert scan(round.table, 1, "4C", burn=True) == {"duplicate": False, "seq": 1}
    assert scan(round.table, 2, "9S") == {"duplicate": False, "seq": 2}
    assert scan(round.table, 2, "9S") == {"duplicate": True, "seq": 2}
    assert writer.state(round.pk).box_cards[1][0].text == "9S"
    assert current_shoe(round.table).cards_drawn == 2


@pytest.mark.parametrize(
    "seq,card,code",
    [
        (3, "9S", "sequence_gap"),
        (1, "1X", "unreadable_card"),
        (1, "9S", None),
    ],
)
def test_refused_scans_change_nothing(round, seq, card, code):
    if code is None:  # a second 9S in a one-deck shoe is impossible
        scan(round.table, 1, "9S")
        seq, code = 2, "card_count_exceeded"
    events = RoundEvent.objects.count()
    reader = current_shoe(round.table).reader_seq
    with pytest.raises(EngineError) as exc:
        scan(round.table, seq, card)
    assert exc.value.code == code
    # A card read is never named: the tablet, facing the table, shows reader errors.
    assert "9S" not in exc.value.line()
    if code == "card_count_exceeded":
        assert exc.value.line() == (
            "reader card 2 would be one copy more of its card than this 1-deck shoe holds: "
            "check the card (a misread, or a card from another shoe), then scan it again or "
            "enter it by hand; a supervisor has been alerted"
        )
    assert RoundEvent.objects.count() == events
    assert current_shoe(round.table).reader_seq == reader


def test_a_card_when_no_round_wants_one(round):
    Round.objects.filter(pk=round.pk).update(phase=Round.Phase.SETTLED)
    with pytest.raises(EngineError) as exc:
        scan(round.table, 1, "9S")
    assert exc.value.code == "card_not_expected"
    # The tablet shows reader errors to the table: a card read face down is never named.
    assert exc.value.line() == "reader card 1 arrived but no round wants a card now"


def test_a_passed_deadlines_timeout_stands_when_the_card_that_found_it_is_refused(round):
    """A card scanned after the players' deadline first applies the step's timeout (every
    station stands); when that settles the round, the card is refused as unexpected, and
    the timeout, committed on its own, is not rolled back with the refused scan."""
    table = round.table
    for seq, card in enumerate("TS 9D 6H 8C".split(), start=1):  # 16 against a dealer 17
        scan(table, seq, card)
    Round.objects.filter(pk=round.pk).update(deadline=timezone.now() - timedelta(seconds=2))
    with pytest.raises(EngineError) as refused:
        scan(table, 5, "2S")
    assert refused.value.code == "card_not_expected"
    round.refresh_from_db()
    assert round.phase == Round.Phase.SETTLED
    kinds = list(round.events.order_by("seq").values_list("kind", flat=True))
    assert kinds[-1] == RoundEvent.Kind.TIMEOUT and kinds.count("card") == 4
    assert current_shoe(table).reader_seq == 4  # the refused scan took no sequence number


def test_a_card_reads_its_round_twice_and_its_shoe_once(round):
    """A card waits for its commit before any station sees it: its round is read once to
    find a passed deadline and once locked (held for the writer, which reads it no more),
    its shoe once, locked."""
    scan(round.table, 1, "4C", burn=True)  # the engine built: what a later card finds
    with CaptureQueriesContext(connection) as statements:
        assert scan(round.table, 2, "9S") == {"duplicate": False, "seq": 2}
    sql = [query["sql"] for query in statements.captured_queries]
    round_reads = [s for s in sql if s.startswith("SELECT") and 'FROM "rounds_round"' in s]
    shoe_reads = [s for s in sql if s.startswith("SELECT") and 'FROM "tablehub_shoe"' in s]
    assert len(round_reads) == 2, round_reads
    if connection.vendor == "postgresql":  # SQLite locks the whole database instead
        assert "FOR NO KEY UPDATE" in round_reads[1] and "FOR" not in round_reads[0]
    assert len(shoe_reads) == 1
    # One savepoint at most: the card's transaction inside the test's own (none in the
    # server, where the card's transaction is the outermost).
    assert len([s for s in sql if s.startswith("SAVEPOINT")]) <= 1
    assert writer.state(round.pk).box_cards[1][0].text == "9S"
