"""Paytables: validating them and choosing the one combination a bet is paid for.

A paytable maps combination codes to "pays N to 1"; a winning bet returns
stake x (N + 1), rounded down to the cent. In For 6's hard-6 codes take a list
of three multipliers, one hidden behind each of the three picks of the bonus
game. A combination missing from a paytable pays nothing.

A parsed ``Paytable`` carries its bet's catalogue entry: the rules engine settles the bet
through it (``settle_at``, ``paid``, ``returned``: rounds/engine/specials.py,
``OfferedBet``) and so needs no import of this package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation

from rounds.engine.cards import Card
from rounds.engine.errors import EngineError
from rounds.engine.money import cents
from rounds.engine.specials import Pays, SettleAt

from .catalog import BETS, BetSpec, hits


class Paytable(dict[str, Pays]):
    """One special bet's paytable (combination code -> pays), with the bet it is for."""

    def __init__(self, spec: BetSpec, pays: Mapping[str, Pays] | None = None) -> None:
        super().__init__(pays or {})
        self.spec = spec

    @property
    def code(self) -> str:
        return self.spec.code

    @property
    def settle_at(self) -> SettleAt:
        return self.spec.settle_at

    @property
    def bonus_combinations(self) -> frozenset[str]:
        return self.spec.bonus_combinations

    def paid(
        self,
        p1: Card,
        p2: Card,
        up: Card | None = None,
        second: Card | None = None,
        dealer: Sequence[Card] | None = None,
    ) -> str | None:
        """The combination the bet is paid for with these cards (``paid_combination`` of
        what it ``hits``); None: it loses."""
        return paid_combination(self.spec, hits(self.spec, p1, p2, up, second, dealer), self)

    @staticmethod
    def returned(stake: Decimal, pays: Decimal) -> Decimal:
        return returned(stake, pays)


def _pay(value: object, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, str, Decimal)):
        raise EngineError(f"{where} must be a number, got {value!r}")
    try:
        pay = Decimal(value)
    except InvalidOperation:
        raise EngineError(f"{where} must be a number, got {value!r}") from None
    if not pay.is_finite() or pay < 0:
        raise EngineError(f"{where} must not be negative, got {value}")
    if pay > 1_000_000:
        raise EngineError(f"{where} is too large: {value}")
    return pay


def parse_paytable(code: str, data: object, where: str = "special_bets") -> Paytable:
    """Validate one bet's paytable: known bet and combination codes, non-negative pays."""
    spec = BETS.get(code)
    if spec is None:
        raise EngineError(f"{where}: unknown bet code {code!r}")
    if not isinstance(data, dict):
        raise EngineError(f"{where}: {code} paytable must be an object of combination -> pays")
    table = Paytable(spec)
    for combo, value in data.items():
        if combo not in spec.combinations:
            raise EngineError(f"{where}: {code} has no combination {combo!r}")
        place = f"{where}: {code} {combo}"
        if combo in spec.bonus_combinations:
            if not isinstance(value, list) or len(value) != 3:
                raise EngineError(f"{place} must be a list of three multipliers")
            first, second, third = (_pay(v, place) for v in value)
            table[combo] = (first, second, third)
        else:
            table[combo] = _pay(value, place)
    return table


def paid_combination(spec: BetSpec, hit: set[str], table: Mapping[str, Pays]) -> str | None:
    """The hit combination with the highest pay; the first in spec order on a tie."""
    best, best_pay = None, None
    for combo in spec.combinations:
        if combo in hit and combo in table:
            pay = table[combo]
            value = sum(pay) / 3 if isinstance(pay, tuple) else pay
            if best_pay is None or value > best_pay:
                best, best_pay = combo, value
    return best


def returned(stake: Decimal, pays: Decimal) -> Decimal:
    """A winning bet returns stake x (N + 1), rounded down to the cent."""
    return cents(stake * (pays + 1))
