"""The virtual shoe: a cryptographically random shuffle that deals through the same input
as the card reader, for the demo table, video mode and tests. Each shuffle is provably fair
(tablehub/fair_shoe.py): committed to before its first card, revealed when it has ended.

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

from collections import Counter

from django.db import transaction

from croupier.services import apply_passed_deadline, locked_shoe, scan
from rounds import writer
from rounds.engine import EngineError
from rounds.models import CARD_PHASES, Round
from tablehub import fair_shoe
from tablehub.models import Shoe, Table


def shuffle(shoe: Shoe, round: Round | None = None) -> None:
    """Shuffle the locked shoe afresh (a server seed from ``secrets`` and the stations'
    seeds), its commitment published before the card that asked for it."""
    made = fair_shoe.new_shuffle(shoe, round.pk if round is not None else None)
    shoe.virtual_order = {
        "cards": list(made.order),
        "start": shoe.reader_seq,
        "round": round.pk if round is not None else None,
        "shuffle": made.pk,
    }
    shoe.save(update_fields=["virtual_order"])


def shuffle_ahead(round: Round) -> None:
    """A video table's round is dealt from the virtual shoe alone: its order is shuffled and
    committed as the round opens, before any bet (at a table with a cut card only when the
    shoe has no order left to deal). Called in the transaction that opens the round."""
    table = round.table
    shoe = locked_shoe(table)
    order = shoe.virtual_order or {}
    dealing = (
        order.get("shuffle") is not None
        and shoe.reader_seq - order["start"] < len(order["cards"])
        and not fair_shoe.is_revealed(order["shuffle"])
    )
    if table.shuffler == Table.Shuffler.CONTINUOUS or not dealing:
        shuffle(shoe, round)


def deal_next(table: Table, burn: bool = False) -> dict:
    """Draw the next card of the virtual shoe and scan it like a reader would."""
    apply_passed_deadline(table)
    with transaction.atomic():
        shoe = locked_shoe(table)
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
        made = shoe.virtual_order.get("shuffle") if shoe.virtual_order else None
        shoe.virtual_order = {
            "cards": cards,
            "start": shoe.reader_seq,
            "round": round.pk,
            "shuffle": made,
        }
        shoe.save(update_fields=["virtual_order"])
        card = cards[0]
        try:
            result = scan(table, shoe.reader_seq + 1, card, burn=burn)
        except EngineError as exc:
            if card not in exc.reason:
                raise
            raise EngineError(
                f"the virtual shoe's next card was refused ({exc.code}): nothing was drawn",
                code=exc.code,
            ) from None
        if made is not None and not result["duplicate"]:
            # The cards left are the end of the shuffle's order: the card's place in it.
            position = shoe.decks * 52 - len(cards)
            seq = Round.objects.values_list("last_seq", flat=True).get(pk=round.pk)
            fair_shoe.record_dealt(made, position, round.pk, seq)
        return result


def _cards_left(shoe: Shoe, table: Table, round: Round) -> list[str]:
    """The order from the next card on; shuffled afresh when there is none, or (at a
    continuous shuffler's table) when it was shuffled for another round. An order without
    a round (stacked by a test) is taken by the next round that draws."""
    order = shoe.virtual_order
    fresh = not order or shoe.reader_seq - order["start"] >= len(order["cards"])
    if not fresh and order and order.get("shuffle") is not None:
        fresh = fair_shoe.is_revealed(order["shuffle"])  # it ended: it never deals again
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
