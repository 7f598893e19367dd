"""Cards, ranks, suits and shoe composition.

A card is written rank + suit (``"TD"``: ten of diamonds). The engine works
with interned ``Card`` objects so that comparing and hashing them is cheap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .errors import EngineError, shown

RANKS = "23456789TJQKA"  # in the order straights and the A-2 bet count them
SUITS = "SHDC"
RED_SUITS = frozenset("HD")
TEN_VALUE_RANKS = frozenset("TJQK")
_POINTS = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10} | {str(n): n for n in range(2, 10)}


class Card:
    """One card. There is one instance per rank and suit (see ``parse_card``), so cards
    compare and hash by identity, and their values are plain attributes: the engine reads
    them on every decision, and properties would cost a call each time."""

    __slots__ = ("rank", "suit", "text", "points", "is_ace", "is_ten_value", "is_red")

    def __init__(self, rank: str, suit: str) -> None:
        self.rank = rank
        self.suit = suit
        self.text = rank + suit
        self.points = _POINTS[rank]  # blackjack points, the ace counted as 1
        self.is_ace = rank == "A"
        self.is_ten_value = rank in TEN_VALUE_RANKS
        self.is_red = suit in RED_SUITS

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({self.text})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return parse_card, (self.text,)  # copies and pickles stay the one interned card

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Card:
        return self


_CARDS = {r + s: Card(r, s) for r in RANKS for s in SUITS}
ALL_CARDS: tuple[Card, ...] = tuple(_CARDS.values())


def parse_card(text: object) -> Card:
    """Read ``"8S"``, ``"TD"`` or ``"10D"``, exactly as spec/scenario-format.md writes cards
    (upper case, nothing around them); raise EngineError for anything else."""
    if isinstance(text, str):
        card = _CARDS.get("T" + text[2:] if text.startswith("10") else text)
        if card is not None:
            return card
    raise EngineError(f"{shown(text)} is not a card (rank A 2-9 T J Q K or 10, then suit S H D C)")


def check_copies(cards: Iterable[Card], decks: int, where: str = "shoe") -> None:
    """Refuse a run of cards holding more copies of a card than the shoe has."""
    seen = Counter(cards)
    for card, count in seen.items():
        if count > decks:
            raise EngineError(
                f"{where}: {count} copies of {card}, but a {decks}-deck shoe holds {decks}"
            )
