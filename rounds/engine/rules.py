"""The RuleSet: every rule of the scenario format, frozen, with its default.

``RuleSet.from_dict`` reads a scenario ``rules`` object and refuses unknown
fields and bad values with a message naming the rule, because a misspelt rule
must never pass silently. ``RuleSet.to_dict`` gives every rule back, defaults
filled in (the form par sheets and the table configuration store).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from typing import Any

from .errors import EngineError, shown

BLACKJACK_PAYS = {"3:2": Decimal(3) / Decimal(2), "6:5": Decimal(6) / Decimal(5), "1:1": Decimal(1)}
DOUBLE_ON = ("any", "9-11", "10-11")
AUTO_STAND = ("hard21", "21")
TIMEOUT_ACTIONS = ("stand", "hit_soft")


@dataclass(frozen=True, slots=True)
class RuleSet:
    decks: int = 8
    dealer_hits_soft_17: bool = False
    hole_card: bool = True
    peek: bool = True
    obo: bool = False
    blackjack_pays: str = "3:2"
    double_on: str = "any"
    double_after_split: bool = True
    double_after_hit: bool = False
    double_for_less: bool = False
    max_splits: int = 3
    resplit_aces: bool = False
    hit_split_aces: bool = False
    split_unlike_tens: bool = True
    late_surrender: bool = True
    surrender_after_split: bool = False
    insurance: bool = True
    even_money: bool = True
    auto_stand: str = "hard21"
    charlie: int | None = None
    dealer_draws_to_end: bool = False
    timeout_action: str = "stand"
    special_without_main: int = 0

    def __post_init__(self) -> None:
        _check_int("decks", self.decks, 1, 8)
        for f in fields(self):
            if f.type == "bool" and not isinstance(getattr(self, f.name), bool):
                raise EngineError(
                    f"rules: {f.name} must be true or false, got {shown(getattr(self, f.name))}"
                )
        _check_choice("blackjack_pays", self.blackjack_pays, tuple(BLACKJACK_PAYS))
        _check_choice("double_on", self.double_on, DOUBLE_ON)
        _check_int("max_splits", self.max_splits, 0, 7)
        _check_choice("auto_stand", self.auto_stand, AUTO_STAND)
        if self.charlie is not None:
            _check_int("charlie", self.charlie, 3, 21)
        _check_choice("timeout_action", self.timeout_action, TIMEOUT_ACTIONS)
        _check_int("special_without_main", self.special_without_main, 0, 2)

    @classmethod
    def from_dict(cls, data: object) -> RuleSet:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise EngineError(f"rules must be an object, got {shown(data)}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise EngineError(f"rules: unknown rule {unknown[0]!r}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def blackjack_ratio(self) -> Decimal:
        return BLACKJACK_PAYS[self.blackjack_pays]


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EngineError(
            f"rules: {name} must be a whole number from {low} to {high}, got {shown(value)}"
        )


def _check_choice(name: str, value: object, choices: tuple[Any, ...]) -> None:
    if value not in choices:
        allowed = ", ".join(f'"{c}"' if isinstance(c, str) else str(c) for c in choices)
        raise EngineError(f"rules: {name} must be one of {allowed}, got {shown(value)}")
