"""The blackjack rules engine: pure Python, no Django, no I/O, deterministic.

``Round`` plays one round from events (cards, decisions, timeouts) under a
frozen ``RuleSet``, in common draw or, given a ``Seating``, in seat mode;
``play_scenario`` plays a scenario file (spec/scenario-format.md) through it.
The scenario command, the live table and the simulators all call this package.
"""

from .cards import ALL_CARDS, Card, parse_card
from .errors import EngineError
from .hands import hand_total
from .money import cents, parse_money
from .round import (
    Action,
    Bet,
    Burn,
    CardDrawn,
    Decision,
    Notice,
    Phase,
    Round,
    SeatLeft,
    Timeout,
)
from .rules import RuleSet
from .scenario import parse_scenario, play_scenario
from .seating import Seating

__all__ = [
    "ALL_CARDS",
    "Action",
    "Bet",
    "Burn",
    "Card",
    "CardDrawn",
    "Decision",
    "EngineError",
    "Notice",
    "Phase",
    "Round",
    "RuleSet",
    "SeatLeft",
    "Seating",
    "Timeout",
    "cents",
    "hand_total",
    "parse_card",
    "parse_money",
    "parse_scenario",
    "play_scenario",
]
