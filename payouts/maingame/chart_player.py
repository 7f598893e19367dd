"""Play the rules engine by a basic-strategy chart (the par sheet's ``chart``).

Used to check the par sheet's return against rounds really played through the
engine (bench/maingame.py and its test): the player answers each prompt with
the chart's play for its hand and the dealer's up card, declining insurance
and even money.
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

    def decide(self, cards: list[Card], up: Card, prompt: dict[str, Any]) -> str:
        allowed = prompt["allowed"]
        if prompt["kind"] == "insurance":
            return "no_insurance"
        if prompt["kind"] == "even_money":
            return "no_even_money"
        if prompt["kind"] == "bonus_pick":
            return "pick_1"
        u = label(up)
        total, soft = hand_total(cards)
        if len(cards) == 2 and "surrender" in allowed and not soft:
            if self.chart["surrender"].get(str(total), {}).get(u) == "R":
                return "surrender"
        if len(cards) == 2 and "split" in allowed and label(cards[0]) == label(cards[1]):
            key = f"{label(cards[0])},{label(cards[1])}"
            if self.chart["pairs"].get(key, {}).get(u) == "P":
                return "split"
        table = self.chart["soft" if soft else "hard"]
        letter = table.get(str(total), {}).get(u, "H" if total < 17 else "S")
        if total >= 21:
            letter = "S"
        if letter in ("D", "Ds"):
            if "double" in allowed:
                return "double"
            letter = "H" if letter == "D" else "S"
        if letter == "H" and "hit" in allowed:
            return "hit"
        return "stand"
