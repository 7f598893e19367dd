"""The special bets: their codes, combinations in spec order, and when they settle.

``BETS`` is the one registry of spec/special-bets.md. Each entry names the
cards its evaluator reads, the moment the bet can be settled (one of the
engine's moments, ``SettleAt``) and the combinations in the spec's order (that
order breaks ties between two combinations that pay the same).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from rounds.engine.specials import SettleAt

from . import evaluators as ev


class Cards(StrEnum):
    """Which cards an evaluator reads."""

    UP = "D"
    PLAYER = "P1 P2"
    PLAYER_UP = "P1 P2 D"
    PLAYER_DEALER_TWO = "P1 P2 D H"
    DEALER_FINAL = "dealer's final hand"


@dataclass(frozen=True)
class BetSpec:
    code: str
    cards: Cards
    combinations: tuple[str, ...]
    evaluate: Callable[..., set[str]]
    settle_at: SettleAt = SettleAt.DEAL
    needs_main: bool = False  # always needs a main bet on its box, whatever the table says
    ordered: bool = False  # pays differently when P1 and P2 change places (7s)
    bonus_combinations: frozenset[str] = frozenset()  # paid through the In For 6 bonus game


POKER = ("suited_trips", "straight_flush", "three_of_a_kind", "straight", "flush")
LUCKY = ("suited_777", "suited_678", "777", "678", "suited_21", "21", "20", "19")
LADIES = ("qh_pair_dealer_bj", "qh_pair", "matched_20", "suited_20", "any_20")
FACES = ("diamond_pair", "matched_20", "any_20", "one")
HARD_6 = ("hard_6_exacta", "hard_6_coloured", "hard_6_mixed")

_SPECS = [
    BetSpec("21+3", Cards.PLAYER_UP, POKER, ev.twenty_one_plus_three),
    BetSpec("top_21+3", Cards.PLAYER_UP, POKER[:3], ev.twenty_one_plus_three),
    BetSpec("poker_3", Cards.PLAYER_UP, POKER[1:], ev.twenty_one_plus_three),
    BetSpec("poker_3_bonus", Cards.PLAYER_UP, POKER[:3], ev.twenty_one_plus_three),
    BetSpec("lucky_lucky", Cards.PLAYER_UP, LUCKY, ev.lucky_lucky),
    BetSpec("19+", Cards.PLAYER_UP, LUCKY, ev.lucky_lucky),
    BetSpec(
        "c3", Cards.PLAYER_UP, ("highest_hearts", "jacks_in_black", "triplets", "red_carpet"), ev.c3
    ),
    BetSpec(
        "lucky_ladies", Cards.PLAYER_DEALER_TWO, LADIES, ev.lucky_ladies, SettleAt.DEALER_SECOND
    ),
    BetSpec(
        "qq_as_lucky_ladies",
        Cards.PLAYER_DEALER_TWO,
        LADIES,
        ev.lucky_ladies,
        SettleAt.DEALER_SECOND,
    ),
    BetSpec("kk", Cards.PLAYER, FACES, ev.face_pair("K")),
    BetSpec("qq", Cards.PLAYER, FACES, ev.face_pair("Q")),
    BetSpec("jj", Cards.PLAYER, FACES, ev.face_pair("J")),
    BetSpec("pair", Cards.PLAYER, ("suited_pair", "pair"), ev.pair),
    BetSpec(
        "match",
        Cards.PLAYER_UP,
        ("two_suited", "suited_and_unsuited", "one_suited", "two_unsuited", "one_unsuited"),
        ev.match,
    ),
    BetSpec("suits", Cards.PLAYER, ("suited_kq", "suited"), ev.suits),
    BetSpec("blackjack_bonus", Cards.PLAYER, ("suited", "same_colour"), ev.blackjack_bonus),
    BetSpec(
        "a-2",
        Cards.PLAYER_UP,
        ("three_of_a_kind", "spread_1", "spread_2", "spread_3plus"),
        ev.a_two,
    ),
    BetSpec(
        "7s",
        Cards.PLAYER_UP,
        ("suited_777", "777", "suited_77", "77", "first_7"),
        ev.sevens,
        needs_main=True,
        ordered=True,
    ),
    BetSpec(
        "lucky_aces",
        Cards.PLAYER_DEALER_TWO,
        (
            "four_aces",
            "three_suited_aces",
            "three_aces",
            "two_suited_aces",
            "two_aces",
            "ace_of_diamonds",
            "one_ace",
        ),
        ev.lucky_aces,
        SettleAt.DEALER_SECOND,
    ),
    BetSpec(
        "bust",
        Cards.DEALER_FINAL,
        ("bust_3", "bust_4", "bust_5", "bust_6", "bust_7", "bust_8plus"),
        ev.bust,
        SettleAt.DEALER_FINAL,
        needs_main=True,
    ),
    BetSpec(
        "in_for_6",
        Cards.PLAYER,
        ("easy_6",) + HARD_6,
        ev.in_for_6,
        bonus_combinations=frozenset(HARD_6),
    ),
    BetSpec(
        "sweet_16",
        Cards.PLAYER,
        ("sweet_16", "suited_16", "same_colour_16", "mixed_colour_16"),
        ev.sweet_16,
    ),
    BetSpec("dealer_red", Cards.UP, ("red",), ev.dealer_colour("red")),
    BetSpec("dealer_black", Cards.UP, ("black",), ev.dealer_colour("black")),
]

BETS: dict[str, BetSpec] = {spec.code: spec for spec in _SPECS}


def hits(spec: BetSpec, p1, p2, up=None, second=None, dealer=None) -> set[str]:
    """Every combination the bet hits, given the cards of its box and the dealer."""
    if spec.cards is Cards.UP:
        return spec.evaluate(up)
    if spec.cards is Cards.PLAYER:
        return spec.evaluate(p1, p2)
    if spec.cards is Cards.PLAYER_UP:
        return spec.evaluate(p1, p2, up)
    if spec.cards is Cards.PLAYER_DEALER_TWO:
        return spec.evaluate(p1, p2, up, second)
    return spec.evaluate(dealer)
