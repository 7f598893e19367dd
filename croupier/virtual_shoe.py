"""The virtual shoe: a cryptographically random shuffle that deals through the same input
as the card reader, for the demo table, video mode and tests.

The shuffled order lives only in the database (``Shoe.virtual_order``: ``cards``, the
card at ``reader_seq - start`` next, and the ``round`` it was shuffled for), never in a
message. At a continuous shuffler's table each round starts from a fresh shuffle at its
first card, as the shuffler takes the cards back; at a table with a cut card one shuffle
serves the whole shoe, as a real shoe. A card the round or the shoe cannot take any more (a
card entered by hand took its last copy) is set aside and the next one dealt.

A draw that is refused draws nothing (its transaction is rolled back, the order with it)
and its message never names the card: the dealer has not seen it (issue 17).
"""

from __future__ import annotations

import secrets
from collections import Counter

from django.db import transaction

from croupier.services import apply_passed_deadline, current_shoe, scan
from rounds import writer
from rounds.engine import ALL_CARDS, EngineError
from rounds.models import CARD_PHASES, Round
from tablehub.models import Shoe, Table

SECURE_RNG = secrets.SystemRandom()


def shuffle(shoe: Shoe, round: Round | None = None) -> None:
    cards = [str(c) for c in ALL_CARDS for _ in range(shoe.decks)]
    SECURE_RNG.shuffle(cards)
    shoe.virtual_order = {
        "cards": cards,
        "start": shoe.reader_seq,
        "round": round.pk if round is not None else None,
    }
    shoe.save(update_fields=["virtual_order"])


def deal_next(table: Table, burn: bool = False) -> dict:
    """Draw the next card of the virtual shoe and scan it like a reader would."""
    apply_passed_deadline(table)
    with transaction.atomic():
        shoe = Shoe.objects.select_for_update().get(pk=current_shoe(table).pk)
        round = table.rounds.filter(phase__in=CARD_PHASES).order_by("-pk").first()
        if round is None:  # checked before any card is looked at
            raise EngineError(
                "no round wants a card now: nothing was drawn", code="card_not_expected"
            )
        taken = _copies_out(shoe, table, round)
        cards = _cards_left(shoe, table, round)
        for _ in range(2):  # the order left, else a new shuffle
            while cards and taken[cards[0]] >= shoe.decks:
                cards.pop(0)  # the shoe holds no more of it: set aside
            if cards:
                break
            shuffle(shoe, round)
            cards = _cards_left(shoe, table, round)
        if not cards:
            raise EngineError(
                "every card of this shoe has been drawn: start a new shoe", code="impossible_card"
            )
        shoe.virtual_order = {"cards": cards, "start": shoe.reader_seq, "round": round.pk}
        shoe.save(update_fields=["virtual_order"])
        card = cards[0]
        try:
            return scan(table, shoe.reader_seq + 1, card, burn=burn)
        except EngineError as exc:
            if card not in exc.reason:
                raise
            raise EngineError(
                f"the virtual shoe's next card was refused ({exc.code}): nothing was drawn",
                code=exc.code,
            ) from None


def _cards_left(shoe: Shoe, table: Table, round: Round) -> list[str]:
    """The order from the next card on; shuffled afresh when there is none, or (at a
    continuous shuffler's table) when it was shuffled for another round. An order without
    a round (stacked by a test) is taken by the next round that draws."""
    order = shoe.virtual_order
    fresh = not order or shoe.reader_seq - order["start"] >= len(order["cards"])
    if not fresh and table.shuffler == Table.Shuffler.CONTINUOUS:
        assert order is not None  # not fresh
        fresh = order.get("round") not in (None, round.pk)
    if fresh:
        shuffle(shoe, round)
    order = shoe.virtual_order
    assert order is not None  # shuffled, if it was missing
    return list(order["cards"][shoe.reader_seq - order["start"] :])


def _copies_out(shoe: Shoe, table: Table, round: Round) -> Counter[str]:
    """The copies of each card that have left the shoe: since the shuffle at a table with a
    cut card (croupier.services keeps the counts), this round's at a continuous one."""
    if table.shuffler == Table.Shuffler.CUT_CARD:
        return Counter(shoe.drawn)
    return writer.read(round.pk, lambda engine: Counter(str(c) for c in engine.drawn))
