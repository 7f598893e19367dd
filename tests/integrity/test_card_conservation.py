"""Card conservation (croupier/conservation.py): one card too many is refused with
``card_count_exceeded``, never naming the card, the dealer told to check it and a supervisor
alert raised, kept and logged; a shoe that ends stores the reconciliation of its cards."""

import logging
from decimal import Decimal

import pytest

from croupier.conservation import CODE
from croupier.consumers import scan_reply
from croupier.models import CardAlert
from croupier.services import current_shoe, face_down_card
from croupier.tablet import close_table, manual_card, new_shoe, open_table
from rounds import writer
from rounds.engine import Decision, EngineError, RuleSet
from rounds.models import RoundEvent
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Shoe, Table, TableConfig

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    cash_in(Station.objects.create(table=table, name="s1"), "100", key="start")
    return table


def a_round(table):
    round = writer.open_round(table)
    place_bets(table.stations.get(), [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    return round


def read(table, card):
    return scan_reply(
        table, {"type": "card", "seq": current_shoe(table).reader_seq + 1, "card": card}
    )


def test_the_hole_cards_copy_scanned_again_is_refused_without_naming_it(table, caplog):
    round = a_round(table)
    for card in ("9S", "6C", "TD", "QH"):  # box 1: 9S TD; the dealer: 6C up, QH face down
        assert read(table, card)["ok"]
    assert face_down_card(table) == "QH"
    writer.record(round.pk, Decision("s1", "hit"))  # 19: s1 hits, a card is wanted
    events, shoe = RoundEvent.objects.count(), current_shoe(table)
    caplog.set_level(logging.WARNING, logger="tablehub.croupier")
    refused = read(table, "QH")  # a one-deck shoe's second queen of hearts: a misread?
    assert refused["ok"] is False and refused["error"]["code"] == CODE == "card_count_exceeded"
    message = refused["error"]["message"]
    assert message == (
        "reader card 5 would be one copy more of its card than this 1-deck shoe holds: check "
        "the card (a misread, or a card from another shoe), then scan it again or enter it by "
        "hand; a supervisor has been alerted"
    )
    # Nothing dealt, nothing counted.
    assert RoundEvent.objects.count() == events
    assert current_shoe(table).reader_seq == shoe.reader_seq == 4
    # The alert is kept, with the shoe, the round and the reader's number, never the card.
    alert = CardAlert.objects.get()
    assert (alert.table, alert.shoe, alert.round, alert.reader_seq, alert.code) == (
        table, shoe, round, 5, CODE,
    )  # fmt: skip
    assert alert.message == message
    logged = [r.getMessage() for r in caplog.records if "supervisor alert" in r.getMessage()]
    assert logged == [
        f"table {table.pk} shoe {shoe.pk} round {round.pk}: supervisor alert {alert.pk}: {message}"
    ]
    assert not any("QH" in r.getMessage() for r in caplog.records)
    # The dealer checks the card: it was a misread, the round goes on.
    assert read(table, "2C")["ok"]
    assert RoundEvent.objects.filter(round=round).order_by("seq").last().payload == {"card": "2C"}


def test_a_card_entered_by_hand_is_checked_and_alerted_too(table):
    a_round(table)
    manual_card(table, "9S")
    with pytest.raises(EngineError) as refused:
        manual_card(table, "9S")
    assert refused.value.code == "card_count_exceeded" and "9S" not in refused.value.line()
    alert = CardAlert.objects.get()
    assert (alert.reader_seq, alert.round_id) == (2, writer.current_round(table.pk).pk)
    assert current_shoe(table).cards_drawn == 1


def test_a_shoe_that_ends_keeps_the_reconciliation_of_every_card(table):
    round = a_round(table)
    for card in ("9S", "6C", "TD", "7H"):  # 19 against 6 up, 7 in the hole
        read(table, card)
    writer.record(round.pk, Decision("s1", "stand"))
    assert read(table, "9S")["error"]["code"] == CODE  # the dealer's card: refused, alerted
    read(table, "5D")  # the dealer's 18: the round settles
    round.refresh_from_db()
    assert round.phase == "settled" and round.shoe == current_shoe(table)
    ended = current_shoe(table)
    new_shoe(table)
    ended = Shoe.objects.get(pk=ended.pk)
    assert ended.closed_at is not None
    assert ended.reconciliation == {
        "decks": 1,
        "rounds": [round.pk],
        "cards_dealt": 5,
        "cards_discarded": 0,
        "reader_count": 5,
        "matches_reader": True,
        "by_card": {"5D": 1, "6C": 1, "7H": 1, "9S": 1, "TD": 1},
        "unidentified_discards": 0,
        "over": [],
        "alerts": 1,
        "conserved": True,
    }


def test_a_shoe_whose_log_deals_a_card_too_often_ends_unreconciled(table, caplog):
    round = a_round(table)
    for card in ("9S", "6C", "TD", "7H"):
        read(table, card)
    writer.record(round.pk, Decision("s1", "stand"))
    read(table, "5D")
    # A row changed behind the shoe's back: the 5D logged as a second 9S.
    RoundEvent.objects.filter(round=round, payload__card="5D").update(payload={"card": "9S"})
    ended = current_shoe(table)
    caplog.set_level(logging.WARNING, logger="tablehub.croupier")
    new_shoe(table)
    reconciliation = Shoe.objects.get(pk=ended.pk).reconciliation
    assert reconciliation["by_card"]["9S"] == 2
    assert (reconciliation["over"], reconciliation["conserved"]) == (["9S"], False)
    assert any("ended unreconciled" in r.getMessage() for r in caplog.records)


def test_closing_the_table_reconciles_its_shoe_once_its_last_round_ends(
    table, django_capture_on_commit_callbacks
):
    """The table closed mid-round: the shoe is reconciled when that round has ended, with its
    cards; it stays the table's open shoe (the reader's sequence goes on at the reopening)."""
    Table.objects.filter(pk=table.pk).update(is_open=True)
    round = a_round(table)
    for card in ("9S", "6C", "TD", "7H"):
        read(table, card)
    close_table(table, by="dealer")
    shoe = current_shoe(table)
    assert shoe.reconciliation is None  # a round is still being dealt from it
    writer.record(round.pk, Decision("s1", "stand"))
    with django_capture_on_commit_callbacks(execute=True):
        read(table, "5D")  # the dealer's 18: the last round settles
    shoe = Shoe.objects.get(pk=shoe.pk)
    assert shoe.closed_at is None and current_shoe(table) == shoe
    assert (shoe.reconciliation["rounds"], shoe.reconciliation["cards_dealt"]) == ([round.pk], 5)
    assert shoe.reconciliation["conserved"] is True
    # Reopened and closed again with nothing dealt: reconciled at once, the same cards.
    open_table(table)
    Shoe.objects.filter(pk=shoe.pk).update(reconciliation=None)
    close_table(table, by="dealer")
    assert Shoe.objects.get(pk=shoe.pk).reconciliation["by_card"] == {
        "5D": 1, "6C": 1, "7H": 1, "9S": 1, "TD": 1,
    }  # fmt: skip
