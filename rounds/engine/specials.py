"""What the engine needs of the special bets a table offers, and when it settles them.

The engine settles special bets without knowing any: no bet code, combination, paytable
or evaluator is defined in this package, and it imports nothing from payouts/specials
(import-linter's contracts in pyproject.toml). Its caller passes what the table offers
(``Round(..., paytables)``): by bet code, each bet's paytable carrying its evaluator
(``OfferedBet``), and the placement rules of the whole offer (``SpecialBets``).
payouts/specials makes them (``parse_paytables``, ``Paytables``, ``Paytable``); the live
table's configuration, the scenario files and the simulators all go through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Protocol

from .cards import Card
from .errors import EngineError

# The special bets' [minimum, maximum]: one pair for all, or one per bet code.
SpecialLimits = tuple[Decimal, Decimal] | Mapping[str, tuple[Decimal, Decimal] | None] | None
# In For 6's three multipliers, one behind each pick of the bonus game.
Multipliers = tuple[Decimal, Decimal, Decimal]
# What a paytable pays for one combination: N (to 1), or In For 6's three multipliers.
Pays = Decimal | Multipliers


class SettleAt(StrEnum):
    """The moments of a round at which the engine settles the special bets due."""

    DEAL = "after the initial deal"
    DEALER_SECOND = "once the dealer's second card is known"
    DEALER_FINAL = "at the end of the dealer's hand"


class PlacedBet(Protocol):
    """A bet as the placement rules read it (read-only: the engine's Bet is frozen)."""

    @property
    def station(self) -> str: ...
    @property
    def box(self) -> int: ...
    @property
    def code(self) -> str: ...
    @property
    def stake(self) -> Decimal: ...


class OfferedBet(Protocol):
    """One special bet as the table offers it: its paytable (combination -> pays) and
    the evaluator of its cards (payouts.specials.Paytable)."""

    @property
    def settle_at(self) -> SettleAt: ...

    @property
    def bonus_combinations(self) -> frozenset[str]:
        """Combinations paid through the In For 6 bonus game (the station picks)."""
        ...

    def __getitem__(self, combination: str) -> Pays: ...

    def paid(
        self, p1: Card, p2: Card, up: Card, second: Card | None, dealer: Sequence[Card]
    ) -> str | None:
        """The one combination the bet is paid for, given its box's first two cards and
        the dealer's (up card, second card, whole hand); None: it loses."""
        ...

    def returned(self, stake: Decimal, pays: Decimal) -> Decimal:
        """What a winning stake returns when the combination pays ``pays`` to 1."""
        ...


class SpecialBets(Protocol):
    """Every special bet a table offers, by bet code, and the placement rules that bets
    close under (payouts.specials.Paytables)."""

    def __contains__(self, code: object) -> bool: ...

    def __getitem__(self, code: str) -> OfferedBet: ...

    def check_placement(
        self, bets: Iterable[PlacedBet], special_without_main: int, limits: SpecialLimits
    ) -> None:
        """Refuse (EngineError) the first special bet among ``bets`` that breaks a
        placement rule or is not offered."""
        ...


class _NoSpecialBets(Mapping[str, OfferedBet]):
    """A table that offers no special bet: every special bet placed is refused."""

    def __getitem__(self, code: str) -> OfferedBet:
        raise KeyError(code)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def check_placement(
        self, bets: Iterable[PlacedBet], special_without_main: int, limits: SpecialLimits
    ) -> None:
        for bet in bets:
            if bet.code != "main":
                raise EngineError(
                    f"special bet {bet.code!r} is not offered at this table",
                    bet.station,
                    bet.box,
                    code="special_not_offered",
                )


NO_SPECIAL_BETS = _NoSpecialBets()
