"""The In For 6 bonus game: which multiplier hides behind each of the three picks.

The server assigns the hard-6 paytable's three multipliers to the picks with
a cryptographically secure RNG before the player picks; the assignment is
written to the round's event log and never sent to the station before its
pick. ``SECURE_RNG`` is the one source; tests and the live replay of a scenario fix
the outcome with ``fixed_bonus``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal

SECURE_RNG = secrets.SystemRandom()

# The one seam that fixes the outcome: set only by ``fixed_bonus`` (tests, the live replay of
# a scenario); no setting or environment variable reaches it.
_FIXED: dict[tuple[str, int], Decimal] | None = None


def assign_multipliers(
    station: str, box: int, multipliers: Sequence[Decimal]
) -> tuple[Decimal, Decimal, Decimal]:
    """The three multipliers in a secure random order: the first is behind pick_1."""
    order = list(multipliers)
    if _FIXED is not None:
        wanted = _FIXED.get((station, box), min(order))
        order.remove(next(m for m in order if m == wanted))
        order.insert(0, wanted)
    else:
        SECURE_RNG.shuffle(order)
    first, second, third = order
    return first, second, third


@contextmanager
def fixed_bonus(wanted: dict[tuple[str, int], Decimal]) -> Iterator[None]:
    """Put ``wanted[(station, box)]`` (else the lowest) behind pick_1 while inside."""
    global _FIXED
    before, _FIXED = _FIXED, dict(wanted)
    try:
        yield
    finally:
        _FIXED = before
