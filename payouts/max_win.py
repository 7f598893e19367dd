"""The maximum win of each bet at a table (GLI-19 §5.2.2: the player must be able to see it
at any time): what one bet at its maximum can win, from the configuration version's limits,
rules and paytables. A table configuration holds no cap on wins of its own, so the maximum
win is the largest payout the game itself allows.

* The main bet: the most of a blackjack paid at the table's ratio, a doubled hand won, and
  every hand of the most splits the rules allow won (each doubled when the rules allow a
  double after a split); each hand pays 1 to 1 (a Charlie too).
* A special bet: its paytable's highest "pays N to 1" (In For 6: the highest multiplier
  behind any pick) times its maximum, rounded down to the cent as the settlement rounds.

A kind of bet without a maximum (its limits are absent) has no maximum win: it is left out.
"""

from __future__ import annotations

from decimal import Decimal

from payouts.specials import Paytables
from rounds.engine import RuleSet
from rounds.engine.money import cents, fmt


def main_bet_multiple(rules: RuleSet) -> Decimal:
    """How many times its stake one main bet can win under these rules."""
    hands = rules.max_splits + 1
    per_split_hand = Decimal(2) if rules.double_after_split else Decimal(1)
    return max(
        rules.blackjack_ratio,
        Decimal(2),  # every rule set doubles on some first two cards
        hands * per_split_hand,
    )


def max_wins(
    rules: RuleSet, limits: dict[str, tuple[Decimal, Decimal] | None], paytables: Paytables
) -> dict[str, str]:
    """Bet code (``main`` and each offered special bet) -> the most one bet at its maximum
    can win, a money string; ``limits`` as ``TableConfig.limit`` gives them."""
    wins: dict[str, str] = {}
    main = limits.get("main")
    if main is not None:
        wins["main"] = fmt(cents(main[1] * main_bet_multiple(rules)))
    for code, paytable in paytables.items():
        limit = limits.get(code)
        if limit is None or not paytable:
            continue
        best = max(
            max(pays) if isinstance(pays, tuple) else pays for pays in paytable.values()
        )
        wins[code] = fmt(cents(limit[1] * Decimal(best)))
    return wins
