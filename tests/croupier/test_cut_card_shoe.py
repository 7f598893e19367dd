"""A shoe with a cut card is dealt across rounds: a card whose every copy has left the shoe
since the shuffle is impossible, whatever round it comes in. A continuous shuffler takes
the cards back after each round, so there only the round's own copies count."""

from decimal import Decimal

import pytest

from croupier.services import current_shoe, scan
from croupier.tablet import new_shoe
from rounds import writer
from rounds.engine import Decision, EngineError, RuleSet
from rounds.models import RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db

# One deck. Box 1: AS 9D (20); dealer 6C up, TH in the hole, 5D: 21. The round settles.
FIRST_ROUND = ["AS", "6C", "9D", "TH"]


def make_table(shuffler):
    jurisdiction = Jurisdiction.objects.create(code=f"j-{shuffler}", name="J")
    table = Table.objects.create(name=f"t-{shuffler}", jurisdiction=jurisdiction, shuffler=shuffler)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    cash_in(Station.objects.create(table=table, name="s1"), "100", key="start")
    return table


def play_round(table, cards, stand=True):
    round = writer.open_round(table)
    place_bets(table.stations.get(), [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in cards:
        scan(table, current_shoe(table).reader_seq + 1, card)
    return round


def test_a_cut_card_shoe_refuses_a_card_whose_copies_are_all_out():
    table = make_table(Table.Shuffler.CUT_CARD)
    first = play_round(table, FIRST_ROUND)
    writer.record(first.pk, Decision("s1", "stand"))
    scan(table, 5, "5D")  # the dealer's 21
    first.refresh_from_db()
    assert first.phase == "settled"
    assert current_shoe(table).drawn == {"AS": 1, "6C": 1, "9D": 1, "TH": 1, "5D": 1}

    second = play_round(table, [])
    events = RoundEvent.objects.count()
    with pytest.raises(EngineError) as exc:
        scan(table, 6, "AS")  # the one ace of spades left the shoe in the first round
    assert exc.value.code == "card_count_exceeded"
    assert "reader card 6 would be one copy more of its card than this 1-deck" in exc.value.reason
    shoe = current_shoe(table)
    assert (shoe.reader_seq, RoundEvent.objects.count()) == (5, events)  # nothing changed
    scan(table, 6, "AH")  # another card is fine
    assert writer.state(second.pk).box_cards[1][0].text == "AH"


def test_a_new_shoe_starts_a_new_count():
    table = make_table(Table.Shuffler.CUT_CARD)
    first = play_round(table, FIRST_ROUND)
    writer.record(first.pk, Decision("s1", "stand"))
    scan(table, 5, "5D")
    old = current_shoe(table)
    new_shoe(table)  # the dealer's "New shoe" on the tablet, between rounds
    second = play_round(table, ["AS"])  # a fresh shoe holds its own ace of spades
    assert writer.state(second.pk).box_cards[1][0].text == "AS"
    assert current_shoe(table).pk != old.pk and current_shoe(table).drawn == {"AS": 1}


def test_a_continuous_shuffler_counts_each_round_alone():
    table = make_table(Table.Shuffler.CONTINUOUS)
    first = play_round(table, FIRST_ROUND)
    writer.record(first.pk, Decision("s1", "stand"))
    scan(table, 5, "5D")
    second = play_round(table, ["AS"])  # back in the shuffler after the first round
    assert writer.state(second.pk).box_cards[1][0].text == "AS"
    assert current_shoe(table).drawn == {}  # nothing to count across rounds
