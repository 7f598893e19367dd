"""The virtual shoe deals a secure shuffle through the reader's input; rounds follow rounds."""

import re
from decimal import Decimal

import pytest

from croupier.services import current_shoe
from croupier.tablet import handle
from croupier.virtual_shoe import deal_next
from rounds import writer
from rounds.engine import ALL_CARDS, RuleSet, Timeout
from rounds.models import Round
from rounds.replay import rebuild
from rounds.voids import void_round
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


# -- issue 17, finding 5: a refused draw names no card and draws none; each round a fresh
# shuffle (at a continuous shuffler's table) ------------------------------------------------


@pytest.fixture
def dealer_table():
    from django.contrib.auth.models import User

    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction, is_open=True)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "100", key="start")
    return table, User.objects.create_user("dealer")


def stack(table, cards):
    """These cards on top of the virtual shoe, the rest of its deck after them."""
    shoe = current_shoe(table)
    rest = [str(c) for c in ALL_CARDS if str(c) not in cards]
    shoe.virtual_order = {"cards": list(cards) + rest, "start": shoe.reader_seq}
    shoe.save(update_fields=["virtual_order"])


def test_a_deal_while_bets_are_open_names_no_card_and_draws_none(dealer_table):
    table, dealer = dealer_table
    round = writer.open_round(table)
    place_bets(table.stations.get(), [(1, "main", Decimal("10"))])
    stack(table, ["6D", "9S", "TH", "5C"])
    before = current_shoe(table).virtual_order
    reply = handle(table, dealer, {"type": "deal", "client_id": "d1"})
    assert reply["error"]["code"] == "card_not_expected"
    assert not re.search(r"\b6D\b|\b6 ?♦", reply["error"]["message"]), reply
    shoe = current_shoe(table)
    assert (shoe.reader_seq, shoe.cards_drawn, shoe.virtual_order) == (0, 0, before)
    assert round.events.count() == 0


def test_a_virtual_card_the_round_cannot_take_is_set_aside_unnamed(dealer_table):
    """The dealer entered a card by hand; the virtual shoe's next card is its one copy: the
    virtual shoe deals the card after it (a refusal would tell the dealer what comes next)."""
    table, dealer = dealer_table
    round = writer.open_round(table)
    place_bets(table.stations.get(), [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    assert handle(table, dealer, {"type": "manual_card", "client_id": "m", "card": "AS"})["ok"]
    stack(table, ["AS", "9S", "TH"])  # the shoe's next card: the ace of spades again
    reply = handle(table, dealer, {"type": "deal", "client_id": "d1"})
    assert reply["ok"], reply
    assert [str(c) for c in writer.state(round.pk).drawn] == ["AS", "9S"]


def test_each_round_starts_from_a_fresh_shuffle(dealer_table, django_capture_on_commit_callbacks):
    table, dealer = dealer_table
    station = table.stations.get()
    first = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(first.pk)
    stack(table, ["9S", "6C", "TH"])  # box 1 9S, the dealer 6C up, box 1 TH: then void it
    for n in range(3):
        assert handle(table, dealer, {"type": "deal", "client_id": f"d{n}"})["ok"]
    kept = current_shoe(table).virtual_order
    left = kept["cards"][3 - kept["start"] :]  # what a kept order would deal next
    void_round(first.pk, by="sup", reason="test")
    second = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(second.pk)
    assert handle(table, dealer, {"type": "deal", "client_id": "e"})["ok"]
    order = current_shoe(table).virtual_order
    assert order["round"] == second.pk and order["start"] == 3  # shuffled at its first card
    assert sorted(order["cards"]) == sorted(str(c) for c in ALL_CARDS)  # the whole deck again
    assert order["cards"][:1] == [str(writer.state(second.pk).drawn[0])]
    assert len(left) == 49 and order["cards"] != left + ["9S", "6C", "TH"]


def test_at_a_cut_card_table_one_shuffle_serves_the_shoe(django_capture_on_commit_callbacks):
    """Rounds follow rounds from one order: no card comes twice before the shoe is new."""
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(
        name="t1", jurisdiction=jurisdiction, is_open=True, shuffler=Table.Shuffler.CUT_CARD
    )
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "100", key="start")
    dealt = []
    for _ in range(2):
        round = writer.open_round(table)
        place_bets(station, [(1, "main", Decimal("10"))])
        writer.expire(round.pk, "betting")
        with django_capture_on_commit_callbacks(execute=True):
            for _ in range(30):
                round.refresh_from_db()
                if round.phase == Round.Phase.SETTLED:
                    break
                if writer.state(round.pk).awaiting_card:
                    deal_next(table)
                else:
                    writer.record(round.pk, Timeout())
        assert round.phase == Round.Phase.SETTLED
        dealt += [str(c) for c in rebuild(round).drawn]
    assert len(dealt) == len(set(dealt)) and len(dealt) >= 8  # one deck: every card once
    assert sum(current_shoe(table).drawn.values()) == len(dealt)
