"""The virtual shoe: a cryptographically random shuffle that deals through the same input
as the card reader, for the demo table, video mode and tests.

The shuffled order lives only in the database (never in a message); each round starts from
a fresh shuffle, as a continuous shuffler would.
"""

from __future__ import annotations

import secrets

from django.db import transaction

from croupier.services import apply_passed_deadline, current_shoe, scan
from rounds.engine import ALL_CARDS
from tablehub.models import Shoe, Table

SECURE_RNG = secrets.SystemRandom()


def shuffle(shoe: Shoe) -> None:
    cards = [str(c) for c in ALL_CARDS for _ in range(shoe.decks)]
    SECURE_RNG.shuffle(cards)
    shoe.virtual_order = {"cards": cards, "start": shoe.reader_seq}
    shoe.save(update_fields=["virtual_order"])


def deal_next(table: Table, burn: bool = False) -> dict:
    """Draw the next card of the virtual shoe and scan it like a reader would."""
    apply_passed_deadline(table)
    with transaction.atomic():
        shoe = Shoe.objects.select_for_update().get(pk=current_shoe(table).pk)
        order = shoe.virtual_order
        if not order or shoe.reader_seq - order["start"] >= len(order["cards"]):
            shuffle(shoe)
            order = shoe.virtual_order
            assert order is not None  # shuffle has just set it
        card = order["cards"][shoe.reader_seq - order["start"]]
        return scan(table, shoe.reader_seq + 1, card, burn=burn)
