"""The main game's exact return for one RuleSet: combinatorial analysis over the finite shoe.

One player, one box, the shoe shuffled every round, insurance and even money
declined: the convention of published house-edge tables. Every expected value
is per initial bet.

* Dealer: ``dealer.DealerTable`` gives the dealer's outcome probabilities for
  the shoe less every card seen (the up card and the player's cards). With a
  peek (hole card, up card A or 10-value) they are conditioned on the dealer
  not having a blackjack, and a dealer blackjack ends the round first.
* Composition-dependent play (``rtp_composition_dependent``): for every hand
  composition the best of stand, hit, double, double for less, surrender and
  split, each valued over the exact shoe.
* Basic strategy (``rtp``): one decision per hard total, soft total and pair by
  up card. The chart is found from the decisions' expected values weighted by
  how often each composition is reached, then played exactly.

The player's draws after a peek are conditioned exactly on the hole card not completing
a blackjack (``draws``). Each split hand is valued from the shoe less the pair, the dealer
drawing from the shoe that hand leaves, as if the other hand's cards were not drawn: that is
exact when no resplit can happen (see ``MainGame.split``). Approximations (see
docs/maingame.md): resplits use an expected-hand-count model; ten-value ranks are one rank,
so ``split_unlike_tens`` only matters where splitting tens pays, which it never does here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import numpy as np

from rounds.engine.rules import RuleSet

from .dealer import BLACKJACK, BUST, VALUES, DealerTable

Shoe = tuple[int, ...]
ACE, TEN = 0, 9
FIRST, SPLIT = (
    "first",
    "split",
)  # OBO roles: the hand that kept the box's first card, or one made by a split


def remove(shoe: Shoe, rank: int) -> Shoe:
    return shoe[:rank] + (shoe[rank] - 1,) + shoe[rank + 1 :]


def hand_total(hard: int, ace: bool) -> tuple[int, bool]:
    if ace and hard <= 11:
        return hard + 10, True
    return hard, False


class Spot(NamedTuple):
    """A hand at a decision: its cards' hard total, whether it holds an ace, how many cards,
    whether it is a split hand, and its OBO role. (A tuple: millions are made.)"""

    hard: int
    ace: bool
    n: int
    split: bool = False
    role: str = FIRST

    def add(self, rank: int) -> Spot:
        return Spot(
            self.hard + VALUES[rank], self.ace or rank == ACE, self.n + 1, self.split, self.role
        )

    @property
    def total(self) -> tuple[int, bool]:
        return hand_total(self.hard, self.ace)


# A strategy answers, for a spot and up card, which action to take among the allowed ones.
Chooser = Callable[[Shoe, int, Spot, dict[str, float]], str]


def per_game(method):
    """Memoise a MainGame method in the instance, so the memory goes with the game
    (functools.cache on a method would keep every game alive for good)."""
    name = method.__name__

    @functools.wraps(method)
    def memoised(self, *args):
        memo = self._memos.setdefault(name, {})
        try:
            return memo[args]
        except KeyError:
            value = memo[args] = method(self, *args)
            return value

    return memoised


@dataclass(eq=False)  # hashed by identity: its methods are memoised
class MainGame:
    rules: RuleSet
    tables: list[DealerTable] = field(init=False)

    def __post_init__(self) -> None:
        d = self.rules.decks
        self.full: Shoe = tuple([4 * d] * 9 + [16 * d])
        self.tables = [DealerTable(up, self.rules.dealer_hits_soft_17, d) for up in range(10)]
        self.obo = self.rules.obo and not self.rules.hole_card
        self._dealer: dict[tuple[Shoe, int], np.ndarray] = {}
        self._draws: dict[tuple[Shoe, int], tuple[float, ...]] = {}
        self._memos: dict[str, dict] = {}

    # -- the dealer ---------------------------------------------------------------------------

    def peeked(self, up: int) -> bool:
        return self.rules.hole_card and self.rules.peek and up in (ACE, TEN)

    def dealer(self, shoe: Shoe, up: int) -> np.ndarray:
        key = (shoe, up)
        found = self._dealer.get(key)
        if found is None:
            p = self.tables[up].probabilities(shoe)
            if self.peeked(up):  # the round goes on only when the dealer has no blackjack
                p = p.copy()
                p[:BLACKJACK] /= 1.0 - p[BLACKJACK]
                p[BLACKJACK] = 0.0
            found = self._dealer[key] = p
        return found

    def draws(self, shoe: Shoe, up: int) -> tuple[float, ...]:
        """The chance of each rank as the player's next card.

        ``shoe`` still holds the dealer's hole card. After a peek found no blackjack, the hole
        card is one of the shoe's cards other than the rank that would complete it (10-value
        under an ace, ace under a 10-value), each equally likely: so the next card is that
        rank with chance m_x / (M - 1), and any other rank r with m_r (1 - 1 / (M - m_x)) /
        (M - 1). This is exact: by symmetry the hole card is uniform over the cards not yet
        seen, whatever the player drew before."""
        key = (shoe, up)
        found = self._draws.get(key)
        if found is None:
            n = sum(shoe)
            excluded = TEN if up == ACE else ACE
            others = n - shoe[excluded]
            if not self.peeked(up) or n < 2 or others < 1:
                found = tuple(c / n for c in shoe)
            else:
                keep = 1.0 - 1.0 / others
                found = tuple(
                    (c if r == excluded else c * keep) / (n - 1) for r, c in enumerate(shoe)
                )
            self._draws[key] = found
        return found

    def bj_loss(self, stake: float, role: str) -> float:
        """What a hand that is not a blackjack loses to a dealer blackjack found late."""
        if not self.obo:
            return stake
        return 1.0 if role == FIRST else 0.0  # OBO: original bet only; split hands pushed

    # -- values of finished hands -------------------------------------------------------------

    @per_game
    def stand(self, shoe: Shoe, up: int, spot: Spot, stake: float = 1.0) -> float:
        t, _ = spot.total
        if t > 21:
            return -stake
        p = self.dealer(shoe, up)
        if self.rules.charlie is not None and spot.n >= self.rules.charlie:
            return stake * (1.0 - p[BLACKJACK]) - self.bj_loss(stake, spot.role) * p[BLACKJACK]
        win = p[BUST]
        lose = 0.0
        for i in range(5):
            dealer_total = 17 + i
            if dealer_total < t:
                win += p[i]
            elif dealer_total > t:
                lose += p[i]
        return stake * (win - lose) - self.bj_loss(stake, spot.role) * p[BLACKJACK]

    @per_game
    def draw_one(self, shoe: Shoe, up: int, spot: Spot, stake: float) -> float:
        """Take exactly one card, then stand (a double, or a split ace)."""
        p = self.draws(shoe, up)
        ev = 0.0
        for r in range(10):
            if shoe[r]:
                ev += p[r] * self.stand(remove(shoe, r), up, spot.add(r), stake)
        return ev

    def surrender(self, shoe: Shoe, up: int, spot: Spot) -> float:
        p_bj = self.dealer(shoe, up)[BLACKJACK]
        return -0.5 * (1.0 - p_bj) - self.bj_loss(1.0, spot.role) * p_bj

    # -- which actions a spot allows ----------------------------------------------------------

    def may_double(self, spot: Spot) -> bool:
        r = self.rules
        if spot.n != 2 and not r.double_after_hit:
            return False
        if spot.split and not r.double_after_split:
            return False
        t, soft = spot.total
        if r.double_on == "9-11":
            return not soft and 9 <= t <= 11
        if r.double_on == "10-11":
            return not soft and 10 <= t <= 11
        return t < 21

    def may_surrender(self, spot: Spot) -> bool:
        r = self.rules
        return r.late_surrender and spot.n == 2 and (not spot.split or r.surrender_after_split)

    @per_game
    def actions(self, shoe: Shoe, up: int, spot: Spot, play: Chooser) -> dict[str, float]:
        """The value of every action allowed at this spot, later decisions made by ``play``."""
        values = {"S": self.stand(shoe, up, spot)}
        t, _ = spot.total
        if t >= 21 or (self.rules.charlie is not None and spot.n >= self.rules.charlie):
            return values  # 21 stands by itself; a charlie has won
        values["H"] = self.hit(shoe, up, spot, play)
        if self.may_double(spot):
            values["D"] = self.draw_one(shoe, up, spot, 2.0)
            if self.rules.double_for_less:
                values["DH"] = self.draw_one(shoe, up, spot, 1.5)
        if self.may_surrender(spot):
            values["R"] = self.surrender(shoe, up, spot)
        return values

    def hit(self, shoe: Shoe, up: int, spot: Spot, play: Chooser) -> float:
        p = self.draws(shoe, up)
        ev = 0.0
        for r in range(10):
            if shoe[r]:
                after = spot.add(r)
                if after.hard > 21:
                    ev -= p[r]
                else:
                    ev += p[r] * self.value(remove(shoe, r), up, after, play)
        return ev

    def value(self, shoe: Shoe, up: int, spot: Spot, play: Chooser) -> float:
        """The value of a spot when ``play`` chooses every decision from here on."""
        return self._value(shoe, up, spot, play)

    @per_game
    def _value(self, shoe: Shoe, up: int, spot: Spot, play: Chooser) -> float:
        values = self.actions(shoe, up, spot, play)
        return values[play(shoe, up, spot, values)]

    # -- splits -------------------------------------------------------------------------------

    def split(self, shoe: Shoe, up: int, rank: int, play: Chooser) -> float:
        """Split a pair of ``rank`` (both cards already out of ``shoe``); per initial bet.

        Each hand is valued from ``shoe`` as if it were the only one, the dealer drawing from
        the shoe it leaves. Without resplits this is exact for a strategy that looks only at the
        hand's own cards: the cards after the end of a hand (a stopping time of the shuffled
        shoe) are again a uniformly shuffled shoe, so hand 2 played between hand 1 and the
        dealer changes neither the dealer's chances against hand 1 nor, by symmetry, hand 2's
        own value (E[hand 1 + hand 2] = 2 E[hand 1]); a test checks it against plain recursion
        over the real order of the cards. With resplits, the number of hands is modelled by
        ``expected_hands`` (an approximation, docs/maingame.md)."""
        r = self.rules
        one_card = rank == ACE and not r.hit_split_aces
        may_resplit = r.max_splits > 1 and (rank != ACE or r.resplit_aces)
        p = self.draws(shoe, up)

        def hand_after(x: int, role: str) -> float:
            rest = remove(shoe, x)
            spot = Spot(VALUES[rank] + VALUES[x], rank == ACE or x == ACE, 2, True, role)
            if one_card:
                return self.stand(rest, up, spot)
            return self.value(rest, up, spot, play)

        p_pair = p[rank]
        by_role = {}
        for role in (FIRST, SPLIT) if self.obo else (FIRST,):
            other = [p[x] * hand_after(x, role) for x in range(10) if x != rank and shoe[x]]
            paired = hand_after(rank, role) if shoe[rank] else 0.0
            by_role[role] = (sum(other) / (1 - p_pair) if p_pair < 1 else 0.0, paired)
        no_pair, paired = by_role[SPLIT if self.obo else FIRST]
        if not may_resplit:
            both = 2 * ((1 - p_pair) * no_pair + p_pair * paired)
        else:
            hands_no_pair, hands_pair = expected_hands(p_pair, r.max_splits + 1)
            both = hands_no_pair * no_pair + hands_pair * paired
        if self.obo:  # one of the hands kept the first card: it loses its original bet only
            first_no_pair, first_paired = by_role[FIRST]
            both += (1 - p_pair) * (first_no_pair - no_pair) + p_pair * (first_paired - paired)
        return both


@cache
def expected_hands(p_pair: float, most_hands: int) -> tuple[float, float]:
    """Expected number of split hands that end without drawing the pair's rank, and that end
    holding a pair they may no longer split, when each hand's next card is the pair's rank
    with chance ``p_pair`` and the box may hold ``most_hands`` hands."""

    @cache
    def go(pending: int, hands: int) -> tuple[float, float]:
        if pending == 0:
            return 0.0, 0.0
        done_no_pair = go(pending - 1, hands)
        if hands < most_hands:
            again = go(pending + 1, hands + 1)  # the pair is split again: one more hand to fill
            paired = (again[0], again[1])
        else:
            rest = go(pending - 1, hands)
            paired = (rest[0], rest[1] + 1)
        return (
            (1 - p_pair) * (done_no_pair[0] + 1) + p_pair * paired[0],
            (1 - p_pair) * done_no_pair[1] + p_pair * paired[1],
        )

    return go(2, 2)
