"""The dealer's final hand over a finite shoe, for the main game's par sheet.

The chance of one ordered run of dealer cards drawn without replacement,
``prod(n_i falling m_i) / (N falling |m|)``, depends only on the multiset
``m`` of cards drawn. So for each up card we list, once, every multiset the
dealer can finish with, how many orderings of it the dealer really draws
(stopping exactly when the rules say so) and the outcome. The outcome
probabilities for any shoe are then one vectorised product over that list.

Ranks are indexed 0..9: ace, 2 .. 9, ten-value. Outcomes: 17, 18, 19, 20, 21
(not a blackjack), bust, blackjack.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import numpy as np

VALUES = tuple(range(1, 11))  # points of rank index 0..9, the ace as 1
OUTCOMES = ("17", "18", "19", "20", "21", "bust", "blackjack")
BUST, BLACKJACK = 5, 6


def total(hard: int, has_ace: bool) -> tuple[int, bool]:
    if has_ace and hard <= 11:
        return hard + 10, True
    return hard, False


@cache
def dealer_runs(
    up: int, hits_soft_17: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every finishing multiset of drawn cards after the up card: (multisets, orderings,
    outcome index, number of cards), as arrays."""
    runs: Counter[tuple[tuple[int, ...], int]] = Counter()
    drawn = [0] * 10

    def draw(hard: int, ace: bool, n: int) -> None:
        t, soft = total(hard, ace)
        if n == 2 and t == 21:
            runs[(tuple(drawn), BLACKJACK)] += 1
            return
        if hard > 21:
            runs[(tuple(drawn), BUST)] += 1
            return
        if n >= 2 and (t > 17 or (t == 17 and not (soft and hits_soft_17))):
            runs[(tuple(drawn), t - 17)] += 1
            return
        for r in range(10):
            drawn[r] += 1
            draw(hard + VALUES[r], ace or r == 0, n + 1)
            drawn[r] -= 1

    draw(VALUES[up], up == 0, 1)
    keys = list(runs)
    multisets = np.array([k[0] for k in keys], dtype=np.int64)
    orderings = np.array([runs[k] for k in keys], dtype=np.float64)
    outcome = np.array([k[1] for k in keys], dtype=np.int64)
    sizes = multisets.sum(axis=1)
    return multisets, orderings, outcome, sizes


@cache
def falling_table(largest: int, depth: int) -> np.ndarray:
    """``table[n, j]`` = n (n-1) ... (n-j+1), for n up to ``largest`` and j up to ``depth``."""
    n = np.arange(largest + 1, dtype=np.float64)[:, None]
    steps = np.maximum(n - np.arange(depth + 1)[None, :] + 1, 0)
    steps[:, 0] = 1.0
    return np.cumprod(steps, axis=1)


class DealerTable:
    """Dealer outcome probabilities for shoes drawn from one up card, memoised by shoe."""

    def __init__(self, up: int, hits_soft_17: bool, decks: int = 8) -> None:
        self.up = up
        self.multisets, self.orderings, self.outcome, self.sizes = dealer_runs(up, hits_soft_17)
        depth = int(max(self.multisets.max(), self.sizes.max()))
        self.falling = falling_table(52 * decks, depth)
        self._memo: dict[tuple[int, ...], np.ndarray] = {}

    def probabilities(self, shoe: tuple[int, ...]) -> np.ndarray:
        """P(17), .., P(21), P(bust), P(blackjack) for a shoe (the up card already out of it)."""
        found = self._memo.get(shoe)
        if found is not None:
            return found
        counts = np.asarray(shoe)
        ways = self.falling[counts[None, :], self.multisets].prod(axis=1)
        weight = self.orderings * ways / self.falling[sum(shoe), self.sizes]
        result = np.bincount(self.outcome, weights=weight, minlength=7)
        self._memo[shoe] = result
        return result
