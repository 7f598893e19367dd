"""Money a void or a correction takes back (issue 17, findings 1 and 4): a station's balance
never goes below zero, what it cannot give back is the house's loss (never the next
player's), and a station whose credits no longer cover its bets when bets close loses those
bets alone: the table goes on for everyone else."""

from decimal import Decimal as D

import pytest

from payouts import ledger
from rounds import corrections
from rounds.models import Bet, Round

pytestmark = pytest.mark.django_db


def won_round(play):
    """s1: main 10 on box 1 (9S 8H: 17); s2: main 10 on box 2 (8D 3C, doubles, 9H: 20); the
    dealer 6C QH draws TS and busts (card 8): s1 wins 20 back (110.00), s2 40 (120.00)."""
    round = play.open(s1=(1, "10"), s2=(2, "10"))
    play.close(round)
    play.deal("9S", "8D", "6C", "8H", "3C", "QH")
    play.decide("s1", "stand")
    play.decide("s2", "double")
    play.deal("9H", "TS")
    round.refresh_from_db()
    assert round.phase == "settled"
    assert (play.credits("s1"), play.credits("s2")) == (D("110.00"), D("120.00"))
    return round


def to_a_loss(play, round):
    """The supervisor corrects card 8 to 4S: the dealer makes 20, s1 loses, s2 pushes."""
    play.run(corrections.correct_cards, round.pk, [{"position": 8, "card": "4S"}], by="boss")


def test_a_station_whose_credits_no_longer_cover_its_bets_loses_them_alone(new_play):
    play = new_play(is_open=True)
    won = won_round(play)
    round = Round.objects.get(table=play.table, phase="betting")
    assert play.send("s1", type="place", box=1, amount="100")["ok"]
    assert play.send("s1", type="place", box=3, amount="10")["ok"]  # 110: all its credits
    assert play.send("s2", type="place", box=2, amount="10")["ok"]
    to_a_loss(play, won)  # takes 20 back from s1: 90.00 do not cover 110.00
    assert play.credits("s1") == D("90.00")
    since = len(play.sent)
    play.close(round)  # bets close for the table
    round.refresh_from_db()
    assert round.phase == "deal"
    assert list(Bet.objects.filter(round=round).values_list("station__name", "box", "stake")) == [
        ("s2", 2, D("10.00"))
    ]
    assert play.messages("s1", since=since) == [
        {
            "type": "bets_refused",
            "code": "insufficient_credits",
            "message": "station s1: credits 90.00 do not cover the stakes 110.00",
        }
    ]
    assert (play.credits("s1"), play.credits("s2")) == (D("90.00"), D("90.00"))
    state = play.send("s1", type="state")["state"]
    assert state["bets"] == [] and state["credits"] == "90.00"
    assert ledger.check() == []
