"""Par sheets of the special bets (spec/parsheet.md), by exact enumeration.

Every deal of the cards a bet reads is counted over the finite shoe, weighted
by the number of ways the shoe can deal it (integer counts, so the sums are
exact fractions until they are printed). Bets that read four cards
(``lucky_aces``, ``lucky_ladies``) enumerate the dealer's cards by the classes
that matter to them (each ace by suit / ace, ten-value, other), which gives
the same counts with a fraction of the work. ``bust`` runs the dealer's hand
through the shoe with a memoised recursion over its ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from typing import Any

from rounds.engine.cards import ALL_CARDS, Card, parse_card
from rounds.engine.rules import RuleSet

from .catalog import BETS, BetSpec, Cards, hits
from .paytable import Paytable, paid_combination

# A class of cards the evaluator cannot tell apart: (representative, cards in it).
CardClass = tuple[Card, tuple[Card, ...]]


def _classes(groups: Sequence[Callable[[Card], bool]]) -> list[CardClass]:
    out = []
    for belongs in groups:
        members = tuple(c for c in ALL_CARDS if belongs(c))
        out.append((members[0], members))
    return out


EACH_CARD: list[CardClass] = [(c, (c,)) for c in ALL_CARDS]
ACES_BY_SUIT: list[CardClass] = _classes(
    [lambda c, s=s: c.is_ace and c.suit == s for s in "SHDC"] + [lambda c: not c.is_ace]
)
BLACKJACK_CLASSES: list[CardClass] = _classes(
    [lambda c: c.is_ace, lambda c: c.is_ten_value, lambda c: not (c.is_ace or c.is_ten_value)]
)


def count_deals(
    decks: int,
    positions: Sequence[list[CardClass]],
    score: Callable[[tuple[Card, ...]], str | None],
    symmetric_pair: bool = False,
) -> tuple[dict[str | None, int], int]:
    """Count the ordered deals of ``len(positions)`` cards from a ``decks``-deck shoe.

    Each position draws from its list of card classes; the evaluator sees the class's
    representative, weighted by how many cards of the class are left. A position's
    classes must be as fine as those of every later position. With ``symmetric_pair``
    the score does not depend on the order of the first two cards, so only one order
    of them is scored and counted twice. Returns the counts by score and the total."""
    remaining = {c: decks for c in ALL_CARDS}
    counts: dict[str | None, int] = {}
    total = 1
    for k in range(len(positions)):
        total *= 52 * decks - k
    last = len(positions) - 1

    def deal(i: int, prefix: tuple[Card, ...], weight: int, floor: int) -> None:
        for index, (rep, members) in enumerate(positions[i]):
            if i == 1 and symmetric_pair and index < floor:
                continue  # the other order of the first two cards is counted by doubling
            left = sum(remaining[m] for m in members)
            if not left:
                continue
            w = weight * left
            if i == 1 and symmetric_pair and index != floor:
                w *= 2
            if i == last:
                key = score(prefix + (rep,))
                counts[key] = counts.get(key, 0) + w
                continue
            card = next(m for m in members if remaining[m])
            remaining[card] -= 1
            deal(i + 1, prefix + (rep,), w, index)
            remaining[card] += 1

    deal(0, (), 1, 0)
    return counts, total


def combination_counts(spec: BetSpec, table: Paytable, decks: int) -> tuple[dict, int]:
    """How many deals pay each combination of the bet (None: the bet loses)."""

    def paid(cards: tuple[Card, ...]) -> str | None:
        if spec.cards is Cards.UP:
            return paid_combination(spec, hits(spec, None, None, cards[0]), table)
        p1, p2, up, second = (cards + (None, None))[:4]
        return paid_combination(spec, hits(spec, p1, p2, up, second), table)

    symmetric = not spec.ordered
    if spec.cards is Cards.UP:
        return count_deals(decks, [EACH_CARD], paid)
    if spec.cards is Cards.PLAYER:
        return count_deals(decks, [EACH_CARD] * 2, paid, symmetric)
    if spec.cards is Cards.PLAYER_UP:
        return count_deals(decks, [EACH_CARD] * 3, paid, symmetric)
    if spec.code == "lucky_aces":
        return count_deals(decks, [ACES_BY_SUIT] * 4, paid, symmetric)
    # Lucky Ladies reads the player's two cards and only whether the dealer has a blackjack.
    return count_deals(decks, [EACH_CARD] * 2 + [BLACKJACK_CLASSES] * 2, paid, symmetric)


# --- the dealer's final hand (the bust bet) ----------------------------------------------

_RANK_CARDS = [parse_card(r + "S") for r in "A23456789T"]  # one card per point value


def dealer_bust_distribution(rules: RuleSet) -> dict[int, Fraction]:
    """Probability that the dealer busts with n cards, drawing to the end from a full shoe."""
    start = tuple(4 * rules.decks * (4 if v == 10 else 1) for v in range(1, 11))
    h17 = rules.dealer_hits_soft_17

    @cache
    def draw(
        counts: tuple[int, ...], hard: int, ace: bool, n: int
    ) -> tuple[tuple[int, Fraction], ...]:
        total = hard + 10 if ace and hard <= 11 else hard
        soft = ace and hard <= 11
        if hard > 21:
            return ((n, Fraction(1)),)
        if n >= 2 and (total > 17 or (total == 17 and not (soft and h17))):
            return ()
        if n == 2 and total == 21:
            return ()
        left = sum(counts)
        out: dict[int, Fraction] = {}
        for v in range(1, 11):
            if not counts[v - 1]:
                continue
            p = Fraction(counts[v - 1], left)
            nxt = counts[: v - 1] + (counts[v - 1] - 1,) + counts[v:]
            for cards, q in draw(nxt, hard + v, ace or v == 1, n + 1):
                out[cards] = out.get(cards, 0) + p * q
        return tuple(sorted(out.items()))

    return dict(draw(start, 0, False, 0))


# --- the sheet ----------------------------------------------------------------------------


def special_parsheet(
    code: str, decks: int, table: Paytable, rules: RuleSet | None = None
) -> dict[str, Any]:
    """The par sheet of one special bet for one paytable and deck count (spec/parsheet.md)."""
    spec = BETS[code]
    rules = rules or RuleSet(decks=decks)
    if spec.cards is Cards.DEALER_FINAL:
        dist = dealer_bust_distribution(RuleSet(**(rules.to_dict() | {"decks": decks})))
        probability = {c: Fraction(0) for c in spec.combinations}
        for n, p in dist.items():
            combo = f"bust_{n}" if n < 8 else "bust_8plus"
            if combo in table:
                probability[combo] += p
    else:
        counts, total = combination_counts(spec, table, decks)
        probability = {c: Fraction(counts.get(c, 0), total) for c in spec.combinations}
    rows: list[dict[str, Any]] = []
    rtp = Fraction(0)
    for combo in spec.combinations:
        pays = table.get(combo)
        if pays is None:
            rows.append({"code": combo, "pays": None, "probability": 0.0, "return": 0.0})
            continue
        if isinstance(pays, tuple):
            mean = sum((Fraction(x) for x in pays), Fraction(0)) / 3
        else:
            mean = Fraction(pays)
        ret = probability[combo] * (mean + 1)
        rtp += ret
        rows.append(
            {
                "code": combo,
                "pays": [_number(x) for x in pays] if isinstance(pays, tuple) else _number(pays),
                "probability": float(probability[combo]),
                "return": float(ret),
            }
        )
    hit = sum((probability[c] for c in spec.combinations if c in table), Fraction(0))
    return {
        "bet": code,
        "decks": decks,
        "method": "exact",
        "combinations": rows,
        "hit_frequency": float(hit),
        "rtp": float(rtp),
        "house_edge": float(1 - rtp),
    }


def _number(value: Any) -> int | float:
    return int(value) if value == int(value) else float(value)
