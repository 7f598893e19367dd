"""Every combination code of every special bet, from explicit cards (spec/special-bets.md)."""

import pytest

from payouts.specials import BETS, hits, paid_combination, parse_paytable
from rounds.engine import parse_card


def cards(text):
    return [parse_card(c) for c in text.split()] if text else []


# bet code, P1 P2 D [H] (or the dealer's final hand for bust), every combination hit
CASES = [
    ("21+3", "7H 7H 7H", {"suited_trips", "three_of_a_kind", "flush"}),
    ("21+3", "5D 6D 7D", {"straight_flush", "straight", "flush"}),
    ("21+3", "9S 9H 9C", {"three_of_a_kind"}),
    ("21+3", "QS KH AD", {"straight"}),  # ace high
    ("21+3", "AS 2H 3D", {"straight"}),  # ace low
    ("21+3", "KS AH 2D", set()),  # never both
    ("21+3", "2C 9C KC", {"flush"}),
    ("21+3", "2C 9D KC", set()),
    ("top_21+3", "4S 5S 6S", {"straight_flush", "straight", "flush"}),
    ("poker_3", "JD QD KD", {"straight_flush", "straight", "flush"}),
    ("poker_3_bonus", "8C 8C 8C", {"suited_trips", "three_of_a_kind", "flush"}),
    ("lucky_lucky", "7S 7S 7S", {"suited_777", "777", "suited_21", "21"}),
    ("lucky_lucky", "7S 7H 7D", {"777", "21"}),
    ("lucky_lucky", "6C 8C 7C", {"suited_678", "678", "suited_21", "21"}),
    ("lucky_lucky", "8H 6D 7S", {"678", "21"}),
    ("lucky_lucky", "AS 9S AS", {"suited_21", "21"}),  # A 9 A = 21 (one ace as 11)
    ("lucky_lucky", "KS 5H 5D", {"20"}),
    ("lucky_lucky", "AS 8H TD", {"19"}),  # hard 19
    ("lucky_lucky", "AS 8H 7D", set()),  # hard 16
    ("19+", "9S 9H AD", {"19"}),  # 9 9 A = 19 (the ace as 1)
    ("c3", "AH AH AH", {"highest_hearts", "triplets", "red_carpet"}),
    ("c3", "JS JC JS", {"jacks_in_black", "triplets"}),
    ("c3", "4D 4S 4H", {"triplets"}),
    ("c3", "2H 9D KH", {"red_carpet"}),
    ("lucky_ladies", "QH QH AS 5D", {"qh_pair", "matched_20", "suited_20", "any_20"}),
    (
        "lucky_ladies",
        "QH QH KD AS",
        {"qh_pair_dealer_bj", "qh_pair", "matched_20", "suited_20", "any_20"},
    ),
    ("lucky_ladies", "KS KS 2C 3C", {"matched_20", "suited_20", "any_20"}),
    ("lucky_ladies", "AC 9C 2C 3C", {"suited_20", "any_20"}),
    ("lucky_ladies", "TD KS 2C 3C", {"any_20"}),
    ("qq_as_lucky_ladies", "QH QD AS KD", {"any_20"}),
    ("kk", "KD KD", {"diamond_pair", "matched_20", "any_20"}),
    ("kk", "KS KS", {"matched_20", "any_20"}),
    ("kk", "KS KH", {"any_20"}),  # two kings: not "one"
    ("kk", "KS 5H", {"one"}),
    ("kk", "KS QS", {"any_20", "one"}),
    ("qq", "QD QD", {"diamond_pair", "matched_20", "any_20"}),
    ("qq", "QS 5H", {"one"}),
    ("qq", "QS QH", {"any_20"}),
    ("jj", "JD JD", {"diamond_pair", "matched_20", "any_20"}),
    ("jj", "JC 4H", {"one"}),
    ("top_21+3", "9S 9S 9S", {"suited_trips", "three_of_a_kind", "flush"}),
    ("top_21+3", "9S 9H 9S", {"three_of_a_kind"}),
    ("poker_3", "9S 9H 9S", {"three_of_a_kind"}),
    ("poker_3", "9S TH JS", {"straight"}),
    ("poker_3", "2S TS JS", {"flush"}),
    ("poker_3_bonus", "TS JS QS", {"straight_flush", "straight", "flush"}),
    ("poker_3_bonus", "TS TC TD", {"three_of_a_kind"}),
    ("19+", "7D 7D 7D", {"suited_777", "777", "suited_21", "21"}),
    ("19+", "7D 7H 7C", {"777", "21"}),
    ("19+", "7D 6D 8D", {"suited_678", "678", "suited_21", "21"}),
    ("19+", "7D 6H 8D", {"678", "21"}),
    ("19+", "5D 6D KD", {"suited_21", "21"}),
    ("19+", "5D 6H KD", {"21"}),
    ("19+", "5D 5H KD", {"20"}),
    (
        "qq_as_lucky_ladies",
        "QH QH TS AD",
        {"qh_pair_dealer_bj", "qh_pair", "matched_20", "suited_20", "any_20"},
    ),
    ("qq_as_lucky_ladies", "QH QH 9S AD", {"qh_pair", "matched_20", "suited_20", "any_20"}),
    ("qq_as_lucky_ladies", "JC JC 9S AD", {"matched_20", "suited_20", "any_20"}),
    ("qq_as_lucky_ladies", "JC TC 9S AD", {"suited_20", "any_20"}),
    ("jj", "QC 4H", set()),
    ("pair", "8S 8S", {"suited_pair", "pair"}),
    ("pair", "8S 8H", {"pair"}),
    ("pair", "8S 9S", set()),
    ("match", "7H 7H 7H", {"two_suited"}),
    ("match", "7H 7S 7H", {"suited_and_unsuited"}),
    ("match", "7H 2S 7H", {"one_suited"}),
    ("match", "7C 7S 7H", {"two_unsuited"}),
    ("match", "2C 7S 7H", {"one_unsuited"}),
    ("match", "2C 3S 7H", set()),
    ("suits", "KS QS", {"suited_kq", "suited"}),
    ("suits", "2S QS", {"suited"}),
    ("suits", "KS QH", set()),
    ("blackjack_bonus", "AS KS", {"suited", "same_colour"}),
    ("blackjack_bonus", "AS KC", {"same_colour"}),
    ("blackjack_bonus", "AS KD", set()),
    ("a-2", "5S 5H 5D", {"three_of_a_kind"}),
    ("a-2", "4S 6H 5D", {"spread_1"}),
    ("a-2", "7S 4H 6D", {"spread_2"}),
    ("a-2", "4S TH 9D", {"spread_3plus"}),
    ("a-2", "2S AH KD", {"spread_3plus"}),  # the ace is high
    ("a-2", "4S 5H 5D", set()),  # adjacent ranks: nothing between
    ("a-2", "5S 5H 6D", set()),
    ("7s", "7S 7S 7S", {"suited_777", "777", "suited_77", "77"}),
    ("7s", "7S 7H 7D", {"777", "77"}),
    ("7s", "7S 7S 2D", {"suited_77", "77"}),
    ("7s", "7S 7H 2D", {"77"}),
    ("7s", "7S 2H 7D", {"first_7"}),
    ("7s", "2S 7H 7D", set()),  # P1 is not a 7
    (
        "lucky_aces",
        "AS AS AS AS",
        {"four_aces", "three_suited_aces", "three_aces", "two_suited_aces", "two_aces", "one_ace"},
    ),
    ("lucky_aces", "AS AH AD AC", {"four_aces", "three_aces", "two_aces", "one_ace"}),
    (
        "lucky_aces",
        "AH AH AH 2C",
        {"three_suited_aces", "three_aces", "two_suited_aces", "two_aces", "one_ace"},
    ),
    ("lucky_aces", "AH AS AC 2C", {"three_aces", "two_aces", "one_ace"}),
    ("lucky_aces", "AH 5S AH 2C", {"two_suited_aces", "two_aces", "one_ace"}),
    ("lucky_aces", "AH 5S AD 2C", {"two_aces", "one_ace"}),
    ("lucky_aces", "2H 5S 9C AD", {"ace_of_diamonds", "one_ace"}),
    ("lucky_aces", "2H 5S 9C AC", {"one_ace"}),
    ("lucky_aces", "2H 5S 9C KD", set()),
    ("bust", "TS 6H 9D", {"bust_3"}),
    ("bust", "2S 4H TD 9C", {"bust_4"}),
    ("bust", "2S 2H 2D 9C KS", {"bust_5"}),
    ("bust", "AS 2S 2H 2D 9C 6S", {"bust_6"}),
    ("bust", "AS AH 2S 2H 2D 9C 6S", {"bust_7"}),
    ("bust", "AS AH AD 2S 2H 2D 9C 6S", {"bust_8plus"}),
    ("bust", "TS 7H", set()),
    ("in_for_6", "AS 5H", {"easy_6"}),
    ("in_for_6", "4S 2H", {"easy_6"}),
    ("in_for_6", "3S 3S", {"hard_6_exacta"}),
    ("in_for_6", "3H 3D", {"hard_6_coloured"}),
    ("in_for_6", "3H 3C", {"hard_6_mixed"}),
    ("in_for_6", "AS 4H", set()),
    ("sweet_16", "AH 5H", {"sweet_16", "suited_16", "same_colour_16"}),
    ("sweet_16", "5D AD", {"suited_16", "same_colour_16"}),
    ("sweet_16", "9S 7C", {"same_colour_16"}),
    ("sweet_16", "8S 8D", {"mixed_colour_16"}),
    ("sweet_16", "AS 6D", set()),  # soft 17
    ("dealer_red", "9H", {"red"}),
    ("dealer_red", "9S", set()),
    ("dealer_black", "9S", {"black"}),
    ("dealer_black", "AS", set()),  # an ace up card loses both
    ("dealer_red", "AD", set()),
]


@pytest.mark.parametrize("code,text,expected", CASES, ids=[f"{c}-{t}" for c, t, _ in CASES])
def test_combinations_hit(code, text, expected):
    spec = BETS[code]
    cs = cards(text)
    if code == "bust":
        got = hits(spec, None, None, None, None, cs)
    elif code.startswith("dealer_"):
        got = hits(spec, None, None, cs[0])
    else:
        got = hits(spec, *cs)
    assert got == expected


def test_every_combination_code_is_hit_by_some_case():
    covered = {(code, combo) for code, _, hit in CASES for combo in hit}
    missing = [
        (code, combo)
        for code, spec in BETS.items()
        for combo in spec.combinations
        if (code, combo) not in covered
    ]
    assert missing == []


def test_only_the_highest_paying_hit_is_paid():
    spec = BETS["c3"]
    hit = hits(spec, *cards("AH AH AH"))
    assert (
        paid_combination(spec, hit, parse_paytable("c3", {"triplets": 30, "red_carpet": 5}))
        == "triplets"
    )
    table = parse_paytable("c3", {"highest_hearts": 1000, "triplets": 30})
    assert paid_combination(spec, hit, table) == "highest_hearts"


def test_a_tie_is_paid_as_the_combination_listed_first():
    spec = BETS["21+3"]
    hit = hits(spec, *cards("5D 6D 7D"))  # straight flush, straight and flush
    table = parse_paytable("21+3", {"straight": 9, "flush": 9})
    assert paid_combination(spec, hit, table) == "straight"


def test_a_hit_missing_from_the_paytable_pays_nothing():
    spec = BETS["pair"]
    assert (
        paid_combination(spec, {"suited_pair", "pair"}, parse_paytable("pair", {"pair": 6}))
        == "pair"
    )
    assert paid_combination(spec, {"pair"}, parse_paytable("pair", {"suited_pair": 25})) is None
