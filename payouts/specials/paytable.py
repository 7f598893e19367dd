"""Paytables: validating them and choosing the one combination a bet is paid for.

A paytable maps combination codes to "pays N to 1"; a winning bet returns
stake x (N + 1), rounded down to the cent. In For 6's hard-6 codes take a list
of three multipliers, one hidden behind each of the three picks of the bonus
game. A combination missing from a paytable pays nothing.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from rounds.engine.errors import EngineError
from rounds.engine.money import cents

from .catalog import BETS, BetSpec

Pays = Decimal | tuple[Decimal, Decimal, Decimal]
Paytable = dict[str, Pays]


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
    table: Paytable = {}
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


def paid_combination(spec: BetSpec, hit: set[str], table: Paytable) -> str | None:
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
