"""Special bets inside a round: when they settle, what they fund, and the In For 6 bonus game."""

from decimal import Decimal

import pytest

from payouts.specials import Paytables
from payouts.specials.defaults import default_paytable
from rounds.engine import (
    Bet,
    CardDrawn,
    Decision,
    EngineError,
    Phase,
    Round,
    RuleSet,
    Timeout,
    parse_card,
)
from rounds.engine.round import BonusAssigned

D = Decimal


def new_round(bets, credits="100", rules=None):
    codes = {code for _, _, code, _ in bets if code != "main"}
    return Round(
        rules or RuleSet(),
        [Bet(s, box, code, D(stake)) for s, box, code, stake in bets],
        {s: D(credits) for s, *_ in bets},
        paytables=Paytables({code: default_paytable(code) for code in codes}),
    )


def deal(rnd, text):
    notices = []
    for c in text.split():
        notices += rnd.apply(CardDrawn(parse_card(c)))
    return notices


def test_a_three_card_special_pays_at_once_and_funds_a_double():
    # 21+3 Xtreme: 5H 6H 7H is a straight flush, 40 to 1: 1.00 returns 41.00 before any decision.
    rnd = new_round([("s1", 1, "main", "40"), ("s1", 1, "21+3", "1")], credits="41")
    deal(rnd, "5H 7H 6H 9C")
    assert rnd.seats["s1"].credits == D("41.00")
    assert "double" in rnd.prompt_for("s1")["allowed"]
    rnd.apply(Decision("s1", "double"))
    assert rnd.seats["s1"].credits == D("1.00")


def test_lucky_aces_waits_for_the_dealers_second_card():
    rnd = new_round([("s1", 1, "main", "10"), ("s1", 1, "lucky_aces", "5")])
    deal(rnd, "AS 9C 2D AD")  # P1 P2 D H: two aces, A♠ and A♦
    assert rnd.seats["s1"].specials[0].settled is False
    rnd.apply(Decision("s1", "stand"))  # the dealer's 9 A is 20: revealed, no draw
    assert rnd.settled
    bet = rnd.seats["s1"].specials[0]
    assert (bet.combination, bet.returned) == ("two_aces", D("30.00"))  # 5 to 1


def test_a_bust_bet_keeps_the_dealer_drawing_when_every_hand_is_bust():
    rnd = new_round([("s1", 1, "main", "10"), ("s1", 1, "bust", "10")])
    deal(rnd, "TS 6C 5D 7D")  # box 15, dealer 6 7 = 13
    rnd.apply(Decision("s1", "hit"))
    deal(rnd, "KH")  # 25: bust
    assert rnd.awaiting_card == "dealer"
    deal(rnd, "2S 9S")  # 6 7 2 = 15, then 9: busts with 4 cards
    assert rnd.settled
    bet = rnd.seats["s1"].specials[0]
    assert (bet.combination, bet.returned) == ("bust_4", D("30.00"))  # 2 to 1


def hard_six_round():
    rnd = new_round([("s1", 1, "main", "10"), ("s1", 1, "in_for_6", "2"), ("s2", 1, "main", "5")])
    notices = deal(rnd, "3S 9C 3D 7D")  # box 1: 3♠ 3♦, a mixed hard 6
    return rnd, notices


def test_the_bonus_game_waits_for_the_secure_assignment_then_the_pick():
    rnd, _ = hard_six_round()
    assert rnd.phase is Phase.BONUS
    assert rnd.awaiting_bonus == [("s1", 1, (D(30), D(60), D(100)))]
    assert rnd.prompted_stations == []  # nobody picks before the assignment is made
    with pytest.raises(EngineError):
        rnd.apply(Decision("s1", "pick_1"))
    notices = rnd.apply(BonusAssigned("s1", 1, (D(60), D(100), D(30))))
    assert rnd.prompt_for("s1") == {
        "kind": "bonus_pick",
        "bet": "in_for_6",
        "box": 1,
        "allowed": ["pick_1", "pick_2", "pick_3"],
    }
    assert "100" not in repr([n.message for n in notices])  # the assignment stays hidden
    notices = rnd.apply(Decision("s1", "pick_2"))
    bonus = [n.message for n in notices if n.message.get("type") == "bonus"][0]
    assert bonus["returned"] == "202.00" and bonus["multipliers"] == ["60", "100", "30"]
    assert rnd.seats["s1"].credits == D("100") - D("12") + D("202")
    assert rnd.phase is Phase.PLAY  # the main game goes on


def test_a_station_that_does_not_pick_gets_pick_1():
    rnd, _ = hard_six_round()
    rnd.apply(BonusAssigned("s1", 1, (D(30), D(60), D(100))))
    rnd.apply(Timeout())
    assert rnd.seats["s1"].specials[0].returned == D("62.00")  # 2 x (30 + 1)


def test_an_assignment_that_is_not_the_paytables_list_is_refused():
    rnd, _ = hard_six_round()
    with pytest.raises(EngineError, match="multipliers must be 30, 60, 100"):
        rnd.apply(BonusAssigned("s1", 1, (D(30), D(60), D(500))))
    assert rnd.awaiting_bonus  # nothing changed


def test_bonus_pick_is_not_a_decision_in_the_main_game():
    rnd = new_round([("s1", 1, "main", "10")])
    deal(rnd, "9S 9C 7D 7H")
    with pytest.raises(EngineError, match="no bonus game is open"):
        rnd.apply(Decision("s1", "pick_1"))


def test_a_bet_settled_at_the_end_does_not_fund_a_double():
    # Lucky Aces reads the dealer's second card: its win comes at settlement, too late to double.
    rnd = new_round([("s1", 1, "main", "10"), ("s1", 1, "lucky_aces", "5")], credits="15")
    deal(rnd, "AS 9C 2D 7H")  # one ace on P1: a win, but not yet settled
    assert rnd.seats["s1"].credits == D("0.00")
    assert "double" not in rnd.prompt_for("s1")["allowed"]
    with pytest.raises(EngineError) as exc:
        rnd.apply(Decision("s1", "double"))
    assert exc.value.code == "insufficient_credits"


def test_a_round_given_no_paytables_refuses_every_special_bet_as_not_offered():
    """The engine knows no special bet of its own: they all come with the paytables."""
    bets = [Bet("s1", 1, "main", D("10")), Bet("s1", 1, "pair", D("5"))]
    with pytest.raises(EngineError) as refused:
        Round(RuleSet(), bets, {"s1": D("100")})
    assert refused.value.code == "special_not_offered"
    assert refused.value.line() == (
        "station s1, box 1: special bet 'pair' is not offered at this table"
    )
