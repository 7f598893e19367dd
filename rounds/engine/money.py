"""Money in Decimal cents: parsing stakes and credits, rounding down."""

from __future__ import annotations

import re
from decimal import ROUND_DOWN, Decimal, InvalidOperation

from .errors import EngineError, shown

DECIMAL_STRING = re.compile(r"-?[0-9]+(\.[0-9]+)?")
CENT = Decimal("0.01")
ZERO = Decimal("0.00")
# Far above any table limit; refuses numbers that would only be typos or attacks.
MAX_AMOUNT = Decimal("1000000000")


def parse_money(value: object, what: str = "amount") -> Decimal:
    """A non-negative amount with at most 2 decimal places, from a string or a JSON number.

    Floats are refused: a binary float cannot say 0.10 exactly.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, Decimal)):
        raise EngineError(f'{what} must be a decimal string such as "10.00", got {shown(value)}')
    if isinstance(value, str) and not DECIMAL_STRING.fullmatch(value):
        # Digits with an optional point, as the spec writes money: not "1_000", "1E+2",
        # " 5 " or "NaN", which Python's Decimal would read.
        raise EngineError(f'{what} must be a decimal string such as "10.00", got {shown(value)}')
    try:
        amount = Decimal(value)
    except (InvalidOperation, ValueError):
        raise EngineError(
            f'{what} must be a decimal string such as "10.00", got {shown(value)}'
        ) from None
    if not amount.is_finite():
        raise EngineError(f"{what} must be a finite amount, got {shown(value)}")
    if amount < 0:
        raise EngineError(f"{what} must not be negative, got {value}")
    if amount > MAX_AMOUNT:  # before quantize, which cannot hold e.g. 1e30 in cents
        raise EngineError(f"{what} is too large: {value}", code="amount_too_large")
    if amount != amount.quantize(CENT, rounding=ROUND_DOWN):
        raise EngineError(f"{what} has more than 2 decimal places: {value}")
    return amount.quantize(CENT)


def cents(amount: Decimal) -> Decimal:
    """Round down to the cent (the spec's rule for every fraction of a cent)."""
    return amount.quantize(CENT, rounding=ROUND_DOWN)


def fmt(amount: Decimal) -> str:
    return str(amount.quantize(CENT))


def check_stake_limits(
    code: str,
    stake: Decimal,
    limit: tuple[Decimal, Decimal] | None,
    station: str | None = None,
    box: int | None = None,
) -> None:
    """Refuse a stake outside the table's [minimum, maximum] for its kind of bet."""
    if limit is None:
        return
    low, high = limit
    if stake < low:
        raise EngineError(
            f"{code} stake {stake} is below the table minimum {low}",
            station,
            box,
            code="below_minimum",
        )
    if stake > high:
        raise EngineError(
            f"{code} stake {stake} is above the table maximum {high}",
            station,
            box,
            code="above_maximum",
        )
