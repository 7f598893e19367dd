"""The dealer's defined actions for a card the reader could not read (entered by hand) and
for a card that left the shoe without being scanned and cannot be used (discarded with a
supervisor's approval); docs/croupier.md, "Misreads and misdeals"."""

from decimal import Decimal as D

import pytest

from croupier import consumers
from croupier.services import current_shoe
from rounds import writer
from rounds.models import RoundEvent
from rounds.replay import rebuild

pytestmark = pytest.mark.django_db
SUPERVISOR = {"username": "boss", "password": "boss-pw"}


def test_an_unreadable_card_is_entered_by_hand(play, monkeypatch):
    told = []
    monkeypatch.setattr(consumers, "tell_croupier", lambda table_id, m: told.append(m))
    round = play.open(s1=(1, "10"))
    play.close(round)
    reply = play.run(consumers.scan_reply, play.table, {"seq": 1, "card": "9?"})
    assert reply["ok"] is False and reply["error"]["code"] == "unreadable_card"
    assert told and told[0]["type"] == "reader_error" and told[0]["code"] == "unreadable_card"
    assert current_shoe(play.table).reader_seq == 0  # nothing taken
    entered = play.tablet(type="manual_card", card="9S")  # no approval needed
    assert entered["ok"] and entered["scan"] == {"duplicate": False, "seq": 1}
    assert writer.state(round.pk).box_cards[1][0].text == "9S"
    # the reader goes on after the card entered for it
    assert play.run(consumers.scan_reply, play.table, {"seq": 2, "card": "6C"})["ok"]


def test_a_dropped_card_that_cannot_be_used_is_discarded_with_approval(play, snapshot):
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C")
    before = snapshot(round)
    for wrong in (None, {"username": "dealer", "password": "dealer-pw"}):
        refused = play.tablet(type="discard_card", card="KD", reason="dropped", supervisor=wrong)
        assert refused["error"]["code"] == "supervisor_required"
    no_reason = play.tablet(type="discard_card", card="KD", supervisor=SUPERVISOR)
    assert no_reason["error"]["code"] == "missing_field"
    impossible = play.tablet(  # a one-deck shoe has one 9S: it is box 1's
        type="discard_card", card="9S", reason="dropped", supervisor=SUPERVISOR
    )
    assert impossible["error"]["code"] == "impossible_card"
    assert snapshot(round) == before

    drawn = current_shoe(play.table).cards_drawn
    ok = play.tablet(
        type="discard_card", card="KD", reason="dropped face up", supervisor=SUPERVISOR
    )
    assert ok["ok"], ok
    row = RoundEvent.objects.get(round=round, kind="discard")
    assert row.payload == {
        "card": "KD",
        "reason": "dropped face up",
        "by": "boss",
        "requested_by": "dealer",
    }
    discarded = ok["state"]["round"]["discarded"]
    assert [(d["card"], d["reason"], d["by"]) for d in discarded] == [
        ("KD", "dropped face up", "boss")
    ]
    shoe = current_shoe(play.table)
    assert shoe.cards_drawn == drawn + 1 and shoe.reader_seq == 2
    assert ok["state"]["awaiting"] == "deal box 1"  # the game did not move
    unknown = play.tablet(type="discard_card", reason="lost under the table", supervisor=SUPERVISOR)
    assert unknown["ok"], unknown  # a card nobody could identify
    play.deal("7H", "QH")  # box 1: 9S 7H; the hole card
    play.decide("s1", "stand")
    play.deal("4C")  # dealer 6C QH 4C: 20
    round.refresh_from_db()
    assert round.phase == "settled" and play.credits("s1") == D("90.00")
    writer.forget_cached_engines()
    assert rebuild(round).dealer_outcome()["cards"] == ["6C", "QH", "4C"]


@pytest.mark.parametrize("shuffler", ["continuous", "cut_card"])
def test_a_discard_while_the_hole_card_is_down_is_no_hole_card_oracle(play, shuffler):
    """Issue 17: a one-deck shoe, QH face down; discarding "QH" was refused (impossible_card)
    and any other card accepted: 52 tries named the hole card. The hole card is checked as
    unknown while face down: the discard is logged, the hole card stays where it is."""
    from tablehub.models import Table

    Table.objects.filter(pk=play.table.pk).update(shuffler=shuffler)
    play.table.refresh_from_db()
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C", "7H", "QH")
    for card in ("QH", "KD"):
        ok = play.tablet(type="discard_card", card=card, reason="dropped", supervisor=SUPERVISOR)
        assert ok["ok"], ok
    assert RoundEvent.objects.filter(round=round, kind="discard").count() == 2
    refused = play.tablet(type="discard_card", card="9S", reason="x", supervisor=SUPERVISOR)
    assert refused["error"]["code"] == "impossible_card"  # a card in sight is still checked
