"""Hand values: totals, soft and hard, blackjack and bust."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import Card


def hand_total(cards: Sequence[Card]) -> tuple[int, bool]:
    """The blackjack total and whether it is soft (an ace counted as 11)."""
    total = 0
    has_ace = False
    for card in cards:
        total += card.points
        if card.is_ace:
            has_ace = True
    if has_ace and total <= 11:
        return total + 10, True
    return total, False


def is_two_card_21(cards: Sequence[Card]) -> bool:
    """An ace and a 10-value card; a blackjack unless the hand was split."""
    return len(cards) == 2 and (
        (cards[0].is_ace and cards[1].is_ten_value) or (cards[1].is_ace and cards[0].is_ten_value)
    )
