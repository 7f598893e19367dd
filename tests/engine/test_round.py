"""The round state machine: prompts, allowed decisions, common draw, visibility, atomic refusals."""

from decimal import Decimal

import pytest

from rounds.engine import (
    Bet,
    Burn,
    CardDrawn,
    Decision,
    EngineError,
    Phase,
    Round,
    RuleSet,
    Timeout,
    parse_card,
)


def cards(text: str):
    return [parse_card(c) for c in text.split()]


def new_round(stations=("s1",), box_bets=None, rules=None, credits="100"):
    box_bets = box_bets or {s: {1: "10"} for s in stations}
    bets = [
        Bet(s, box, "main", Decimal(stake))
        for s, boxes in box_bets.items()
        for box, stake in boxes.items()
    ]
    return Round(rules or RuleSet(), bets, {s: Decimal(credits) for s in box_bets}, boxes=3)


def deal(rnd: Round, text: str) -> None:
    for card in cards(text):
        rnd.apply(CardDrawn(card))


def test_croupier_is_told_each_card_of_the_deal_in_order() -> None:
    rnd = new_round(box_bets={"s1": {1: "10", 3: "5"}})
    said = []
    for card in cards("8S 6H 9C 8D 5S 7D"):
        said.append(rnd.croupier_prompt())
        rnd.apply(CardDrawn(card))
    assert said == [
        "deal box 1",
        "deal box 3",
        "deal the dealer's up card",
        "deal box 1",
        "deal box 3",
        "deal the hole card",
    ]
    assert rnd.box_cards == {1: cards("8S 8D"), 3: cards("6H 5S")}
    assert rnd.phase is Phase.PLAY


def test_allowed_decisions_are_the_buttons_a_station_may_press() -> None:
    rnd = new_round(rules=RuleSet(double_on="10-11"))
    deal(rnd, "8S 9C 8D 7D")
    assert rnd.prompt_for("s1")["allowed"] == ["hit", "stand", "split", "surrender"]
    rnd.apply(Decision("s1", "split"))
    deal(rnd, "2S")  # 8S 2S: a hard 10 after a split may double (DAS), no surrender
    assert rnd.prompt_for("s1")["allowed"] == ["hit", "stand", "double"]


def test_a_double_the_credits_cannot_cover_is_greyed_out() -> None:
    rnd = new_round(credits="15")
    deal(rnd, "5S 9C 6D 7D")
    assert "double" not in rnd.prompt_for("s1")["allowed"]
    with pytest.raises(EngineError) as exc:
        rnd.apply(Decision("s1", "double"))
    assert exc.value.code == "insufficient_credits"


def test_one_card_goes_to_every_hand_that_asked_for_one() -> None:
    rnd = new_round(stations=("a", "b", "c"))
    deal(rnd, "5S 9C 6D 7D")
    rnd.apply(Decision("a", "hit"))
    rnd.apply(Decision("b", "stand"))
    assert rnd.awaiting_card is None  # c has not answered yet
    rnd.apply(Decision("c", "double"))
    assert rnd.awaiting_card == "hands"
    deal(rnd, "4H")
    hands = {s: rnd.seats[s].hands[0].cards for s in "abc"}
    assert hands == {"a": cards("5S 6D 4H"), "b": cards("5S 6D"), "c": cards("5S 6D 4H")}
    assert rnd.prompted_stations == ["a"]  # c doubled and is finished


def test_a_refused_decision_changes_nothing() -> None:
    rnd = new_round()
    deal(rnd, "5S 9C 6D 7D")
    rnd.apply(Decision("s1", "hit"))
    deal(rnd, "2H")
    before = repr(rnd.__dict__)  # dataclass reprs show every field of every hand and seat
    with pytest.raises(EngineError, match="double is not allowed on a 3-card hand"):
        rnd.apply(Decision("s1", "double"))
    assert repr(rnd.__dict__) == before


def test_a_card_nobody_asked_for_is_refused() -> None:
    rnd = new_round()
    deal(rnd, "5S 9C 6D 7D")
    with pytest.raises(EngineError) as exc:
        rnd.apply(CardDrawn(parse_card("2H")))
    assert exc.value.code == "card_not_expected"
    assert rnd.drawn == cards("5S 9C 6D 7D")


def test_a_card_beyond_the_decks_is_impossible() -> None:
    rnd = new_round(rules=RuleSet(decks=1))
    rnd.apply(CardDrawn(parse_card("5S")))
    with pytest.raises(EngineError) as exc:
        rnd.apply(CardDrawn(parse_card("5S")))
    assert exc.value.code == "impossible_card"


def test_burn_only_before_the_deal() -> None:
    rnd = new_round()
    rnd.apply(Burn(parse_card("4C")))
    rnd.apply(CardDrawn(parse_card("5S")))
    with pytest.raises(EngineError, match="only be burned before the deal"):
        rnd.apply(Burn(parse_card("4D")))
    assert rnd.burned == cards("4C")


def test_timeout_applies_the_default_and_is_idempotent() -> None:
    rnd = new_round(stations=("a", "b"), rules=RuleSet(timeout_action="hit_soft"))
    deal(rnd, "AS 9C 5D 7D")  # soft 16: hit_soft hits
    rnd.apply(Decision("a", "stand"))
    rnd.apply(Timeout())
    assert rnd.awaiting_card == "hands"
    rnd.apply(Timeout())  # a second expiry of the same step changes nothing
    assert rnd.awaiting_card == "hands"
    deal(rnd, "TH")  # b: A 5 T = hard 16: hit_soft stands
    rnd.apply(Timeout("b"))
    assert rnd.seats["b"].hands[0].finished
    assert rnd.phase is Phase.DEALER or rnd.settled


def test_decision_for_a_station_not_asked_is_refused() -> None:
    rnd = new_round(stations=("a", "b"))
    deal(rnd, "5S 9C 6D 7D")
    rnd.apply(Decision("a", "hit"))
    with pytest.raises(EngineError) as exc:
        rnd.apply(Decision("a", "stand"))
    assert exc.value.code == "not_your_turn"
    with pytest.raises(EngineError) as exc:
        rnd.apply(Decision("zz", "stand"))
    assert exc.value.code == "unknown_station"


def test_decision_names_the_wrong_hand() -> None:
    rnd = new_round()
    deal(rnd, "5S 9C 6D 7D")
    with pytest.raises(EngineError) as exc:
        rnd.apply(Decision("s1", "stand", hand="s1/1/9"))
    assert exc.value.code == "wrong_hand"


def test_hole_card_is_in_no_station_view_or_notice_before_the_reveal() -> None:
    rnd = new_round(stations=("a", "b"))
    seen = []
    for card in cards("9S 5C 7D"):
        seen += rnd.apply(CardDrawn(card))
    seen += rnd.apply(CardDrawn(parse_card("QH")))  # the hole card
    views = [rnd.station_view("a"), rnd.station_view("b"), rnd.public_view()]
    seen += rnd.apply(Decision("a", "stand"))
    assert "QH" not in repr([n.message for n in seen]) + repr(views)
    assert views[0]["dealer"] == {"cards": ["5C"], "hole_card": "face_down"}
    notices = rnd.apply(Decision("b", "stand"))  # last answer: the dealer reveals
    assert {"type": "hole_card", "card": "QH"} in [n.message for n in notices if n.to == "public"]
    assert rnd.awaiting_card == "dealer"  # 15: the dealer draws
    assert rnd.public_view()["dealer"]["cards"] == ["5C", "QH"]


def test_private_notices_go_only_to_their_station() -> None:
    rnd = new_round(stations=("a", "b"))
    deal(rnd, "9S 5C 7D QH")
    notices = rnd.apply(Decision("a", "hit"))
    assert {n.to for n in notices} <= {"a", "public"}


def test_even_money_is_paid_at_once() -> None:
    rnd = new_round()
    deal(rnd, "AS AH KS 9D")
    assert rnd.phase is Phase.INSURANCE
    assert rnd.prompt_for("s1")["kind"] == "even_money"
    rnd.apply(Decision("s1", "even_money"))
    assert rnd.seats["s1"].credits == Decimal("110.00")
    assert rnd.settled and rnd.seats["s1"].hands[0].result == "even_money"


def test_settled_round_refuses_events() -> None:
    rnd = new_round()
    deal(rnd, "AS 9C KS 7D")  # player blackjack, nothing to ask, dealer reveals
    assert rnd.settled
    with pytest.raises(EngineError) as exc:
        rnd.apply(CardDrawn(parse_card("2C")))
    assert exc.value.code == "round_over"


def test_rules_round_trip_with_every_default() -> None:
    rules = RuleSet.from_dict({"decks": 6, "charlie": 5})
    assert RuleSet.from_dict(rules.to_dict()) == rules
    assert rules.to_dict()["dealer_hits_soft_17"] is False
