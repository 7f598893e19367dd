"""Play the rules engine by a basic-strategy chart (the par sheet's ``chart``).

Used to check the par sheet's return against rounds really played through the
engine (bench/maingame.py and its test): the player answers each prompt with
the chart's play for its hand and the dealer's up card (an initial pair by the
pair's own letter, as ``parsheet.Chart`` plays it), declining insurance and even
money.
"""

from __future__ import annotations

from typing import Any

from rounds.engine import Card, hand_total

LABEL = {"A": "A", "T": "T", "J": "T", "Q": "T", "K": "T"}


def label(card: Card) -> str:
    return LABEL.get(card.rank, card.rank)


class ChartPlayer:
    def __init__(self, chart: dict[str, dict[str, dict[str, str]]]) -> None:
        self.chart = chart

    def decide(
        self, cards: list[Card], up: Card, prompt: dict[str, Any], split: bool = False
    ) -> str:
        """The chart's action for a hand (``split``: a hand made by a split)."""
        allowed = prompt["allowed"]
        if prompt["kind"] == "insurance":
            return "no_insurance"
        if prompt["kind"] == "even_money":
            return "no_even_money"
        if prompt["kind"] == "bonus_pick":
            return "pick_1"
        u = label(up)
        total, soft = hand_total(cards)
        if len(cards) == 2 and label(cards[0]) == label(cards[1]):
            letter = self.chart["pairs"][f"{label(cards[0])},{label(cards[1])}"][u]
            if letter == "P" and "split" in allowed:
                return "split"
            if not split and letter != "P":  # an initial pair plays its own letter
                if letter == "R" and "surrender" in allowed:
                    return "surrender"
                if letter != "R":
                    return self._play(letter, allowed)
        if len(cards) == 2 and "surrender" in allowed and not soft:
            if self.chart["surrender"].get(str(total), {}).get(u) == "R":
                return "surrender"
        table = self.chart["soft" if soft else "hard"]
        letter = table.get(str(total), {}).get(u, "H" if total < 17 else "S")
        if total >= 21:
            letter = "S"
        return self._play(letter, allowed)

    @staticmethod
    def _play(letter: str, allowed: list[str]) -> str:
        if letter in ("D", "Ds"):
            if "double" in allowed:
                return "double"
            letter = "H" if letter == "D" else "S"
        if letter == "H" and "hit" in allowed:
            return "hit"
        return "stand"
