"""Special-bet evaluators: which combinations a box's cards hit (spec/special-bets.md).

Each evaluator takes the cards it looks at and returns every combination code
whose condition holds (a suited 777 also hits 777, suited_21 and 21). Which
one is paid, the highest-paying, is the paytable's business (paytable.py).
Pure functions of the cards: no state, no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence

from rounds.engine.cards import RANKS, Card
from rounds.engine.hands import hand_total, is_two_card_21

_RANK_INDEX = {rank: i for i, rank in enumerate(RANKS)}  # 2 .. K A


def _same_suit(cards: Sequence[Card]) -> bool:
    return len({c.suit for c in cards}) == 1


def _same_rank(cards: Sequence[Card]) -> bool:
    return len({c.rank for c in cards}) == 1


def _same_colour(cards: Sequence[Card]) -> bool:
    return len({c.is_red for c in cards}) == 1


def _is_straight(cards: Sequence[Card]) -> bool:
    """Three consecutive ranks; the ace high (Q-K-A) or low (A-2-3), never both (K-A-2)."""
    ranks = sorted(_RANK_INDEX[c.rank] for c in cards)
    if len(set(ranks)) != 3:
        return False
    if ranks[2] - ranks[0] == 2:
        return True
    return {c.rank for c in cards} == {"A", "2", "3"}


def _poker(cards: Sequence[Card]) -> set[str]:
    hits = set()
    trips = _same_rank(cards)
    flush = _same_suit(cards)
    straight = _is_straight(cards)
    if trips and flush:
        hits.add("suited_trips")
    if straight and flush:
        hits.add("straight_flush")
    if trips:
        hits.add("three_of_a_kind")
    if straight:
        hits.add("straight")
    if flush:
        hits.add("flush")
    return hits


def twenty_one_plus_three(p1: Card, p2: Card, up: Card) -> set[str]:
    return _poker((p1, p2, up))


def lucky_lucky(p1: Card, p2: Card, up: Card) -> set[str]:
    cards = (p1, p2, up)
    hits = set()
    suited = _same_suit(cards)
    ranks = sorted(c.rank for c in cards)
    total = hand_total(cards)[0]
    if ranks == ["7", "7", "7"]:
        hits.add("777")
        if suited:
            hits.add("suited_777")
    if ranks == ["6", "7", "8"]:
        hits.add("678")
        if suited:
            hits.add("suited_678")
    if total == 21:
        hits.add("21")
        if suited:
            hits.add("suited_21")
    if total == 20:
        hits.add("20")
    if total == 19:
        hits.add("19")
    return hits


def c3(p1: Card, p2: Card, up: Card) -> set[str]:
    cards = (p1, p2, up)
    hits = set()
    if all(c.rank == "A" and c.suit == "H" for c in cards):
        hits.add("highest_hearts")
    if all(c.rank == "J" and not c.is_red for c in cards):
        hits.add("jacks_in_black")
    if _same_rank(cards):
        hits.add("triplets")
    if all(c.is_red for c in cards):
        hits.add("red_carpet")
    return hits


def _twenty(p1: Card, p2: Card) -> set[str]:
    """The 20-point lines shared by the Lucky Ladies and KK / QQ / JJ bets."""
    hits = set()
    if hand_total((p1, p2))[0] == 20:
        hits.add("any_20")
        if p1.suit == p2.suit:
            hits.add("suited_20")
            if p1.rank == p2.rank:
                hits.add("matched_20")
    return hits


def lucky_ladies(p1: Card, p2: Card, up: Card, second: Card) -> set[str]:
    hits = _twenty(p1, p2)
    if p1.rank == p2.rank == "Q" and p1.suit == p2.suit == "H":
        hits.add("qh_pair")
        if is_two_card_21((up, second)):
            hits.add("qh_pair_dealer_bj")
    return hits


def face_pair(rank: str):
    """The KK, QQ and JJ bets: the same lines for kings, queens or jacks."""

    def evaluate(p1: Card, p2: Card) -> set[str]:
        hits = _twenty(p1, p2) - {"suited_20"}
        if p1.rank == p2.rank == rank and p1.suit == p2.suit == "D":
            hits.add("diamond_pair")
        if (p1.rank == rank) != (p2.rank == rank):
            hits.add("one")
        return hits

    return evaluate


def pair(p1: Card, p2: Card) -> set[str]:
    if p1.rank != p2.rank:
        return set()
    return {"suited_pair", "pair"} if p1.suit == p2.suit else {"pair"}


def match(p1: Card, p2: Card, up: Card) -> set[str]:
    suited = sum(1 for c in (p1, p2) if c.rank == up.rank and c.suit == up.suit)
    unsuited = sum(1 for c in (p1, p2) if c.rank == up.rank and c.suit != up.suit)
    code = {
        (2, 0): "two_suited",
        (1, 1): "suited_and_unsuited",
        (1, 0): "one_suited",
        (0, 2): "two_unsuited",
        (0, 1): "one_unsuited",
    }.get((suited, unsuited))
    return {code} if code else set()


def suits(p1: Card, p2: Card) -> set[str]:
    if p1.suit != p2.suit:
        return set()
    if {p1.rank, p2.rank} == {"K", "Q"}:
        return {"suited_kq", "suited"}
    return {"suited"}


def blackjack_bonus(p1: Card, p2: Card) -> set[str]:
    if not is_two_card_21((p1, p2)):
        return set()
    hits = set()
    if p1.suit == p2.suit:
        hits.add("suited")
    if p1.is_red == p2.is_red:
        hits.add("same_colour")
    return hits


def a_two(p1: Card, p2: Card, up: Card) -> set[str]:
    if p1.rank == p2.rank == up.rank:
        return {"three_of_a_kind"}
    low, high = sorted((_RANK_INDEX[p1.rank], _RANK_INDEX[p2.rank]))
    if not low < _RANK_INDEX[up.rank] < high:
        return set()
    spread = high - low - 1
    return {"spread_1" if spread == 1 else "spread_2" if spread == 2 else "spread_3plus"}


def sevens(p1: Card, p2: Card, up: Card) -> set[str]:
    if p1.rank != "7":
        return set()
    if p2.rank != "7":
        return {"first_7"}
    hits = {"77"}
    if p1.suit == p2.suit:
        hits.add("suited_77")
    if up.rank == "7":
        hits.add("777")
        if p1.suit == p2.suit == up.suit:
            hits.add("suited_777")
    return hits


def lucky_aces(p1: Card, p2: Card, up: Card, second: Card) -> set[str]:
    aces = [c for c in (p1, p2, up, second) if c.is_ace]
    if not aces:
        return set()
    hits = {"one_ace"}
    most_of_one_suit = max(sum(1 for a in aces if a.suit == s) for s in "SHDC")
    if len(aces) == 1 and aces[0].suit == "D":
        hits.add("ace_of_diamonds")
    if len(aces) >= 2:
        hits.add("two_aces")
    if most_of_one_suit >= 2:
        hits.add("two_suited_aces")
    if len(aces) >= 3:
        hits.add("three_aces")
    if most_of_one_suit >= 3:
        hits.add("three_suited_aces")
    if len(aces) == 4:
        hits.add("four_aces")
    return hits


def bust(dealer: Sequence[Card]) -> set[str]:
    if hand_total(dealer)[0] <= 21:
        return set()
    n = len(dealer)
    return {f"bust_{n}" if n < 8 else "bust_8plus"}


def in_for_6(p1: Card, p2: Card) -> set[str]:
    if p1.points + p2.points != 6:
        return set()
    if p1.rank == p2.rank == "3":
        if p1.suit == p2.suit:
            return {"hard_6_exacta"}
        return {"hard_6_coloured"} if p1.is_red == p2.is_red else {"hard_6_mixed"}
    return {"easy_6"}  # A-5 or 2-4, the ace counted as 1


def sweet_16(p1: Card, p2: Card) -> set[str]:
    if hand_total((p1, p2))[0] != 16:
        return set()
    hits = {"mixed_colour_16"} if p1.is_red != p2.is_red else {"same_colour_16"}
    if p1.suit == p2.suit:
        hits.add("suited_16")
        if {p1.rank, p2.rank} == {"A", "5"} and p1.suit == "H":
            hits.add("sweet_16")
    return hits


def dealer_colour(colour: str):
    def evaluate(up: Card) -> set[str]:
        if up.is_ace:
            return set()  # an ace up card loses both colours
        return {colour} if (up.is_red == (colour == "red")) else set()

    return evaluate
