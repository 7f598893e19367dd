"""Voiding a disputed round: in play, and settled within its dispute window (every stake
back, every return taken back, to the cent)."""

from decimal import Decimal as D

import pytest

from payouts.models import LedgerEntry
from rounds.models import Round, RoundEvent
from stations.selectors import player_history

pytestmark = pytest.mark.django_db
SUPERVISOR = {"username": "boss", "password": "boss-pw"}


def settled_round(play):
    """s1: main 10 and pair 5 on box 1 (8S 8H: the pair pays 45), doubles 16 and draws 3D (19);
    s2: main 10 on box 2 (9C 9D, stands on 18); dealer 6C QH draws 2C: 18."""
    round = play.open(s1=(1, "10"), s2=(2, "10"))
    assert play.send("s1", type="place", box=1, bet="pair", amount="5")["ok"]
    play.close(round)
    play.deal("8S", "9C", "6C", "8H", "9D", "QH")
    play.decide("s1", "double")
    play.decide("s2", "stand")
    play.deal("3D", "2C")
    round.refresh_from_db()
    assert round.phase == "settled"
    assert play.credits("s1") == D("160.00")  # 100 - 10 - 5 + 45 - 10 + 40
    assert play.credits("s2") == D("100.00")  # a push
    return round


def test_a_void_after_the_settlement_within_the_window(new_play, snapshot):
    play = new_play(is_open=True)
    round = settled_round(play)
    rounds = Round.objects.count()  # the next round opened at the settlement
    assert play.send("s1", type="dispute")["ok"]
    before = snapshot(round)
    no_reason = play.tablet(type="resolve_dispute", resolution="void", supervisor=SUPERVISOR)
    assert no_reason["error"]["code"] == "missing_field"
    wrong = play.tablet(
        type="resolve_dispute",
        resolution="void",
        reason="shoe fault",
        supervisor={"username": "boss", "password": "wrong"},
    )
    assert wrong["error"]["code"] == "supervisor_required"
    assert snapshot(round) == before

    since = len(play.sent)
    voided = play.tablet(
        type="resolve_dispute", resolution="void", reason="shoe fault", supervisor=SUPERVISOR
    )
    assert voided["ok"], voided
    assert play.credits("s1") == D("100.00") and play.credits("s2") == D("100.00")
    round.refresh_from_db()
    assert round.phase == "void" and round.step_key == "" and round.deadline is None
    refunds = sorted(
        LedgerEntry.objects.filter(round=round, kind="refund", station__isnull=False).values_list(
            "key", "amount"
        )
    )
    r = f"round:{round.pk}"
    assert refunds == sorted(
        [
            (f"{r}:s1:bet:1:main:void", D("10.00")),
            (f"{r}:s1:bet:1:pair:void", D("5.00")),
            (f"{r}:s1:s1/1/1:double:void", D("10.00")),
            (f"{r}:s1:special:1:pair:return:void", D("-45.00")),
            (f"{r}:s1:s1/1/1:return:void", D("-40.00")),
            (f"{r}:s2:bet:2:main:void", D("10.00")),
            (f"{r}:s2:s2/2/1:return:void", D("-10.00")),
        ]
    )
    assert sum(e.amount for e in LedgerEntry.objects.filter(round=round)) == 0
    kinds = list(
        RoundEvent.objects.filter(round=round).order_by("seq").values_list("kind", flat=True)
    )
    assert kinds[-3:] == ["dispute", "dispute_resolved", "void"]
    resolution = RoundEvent.objects.get(round=round, kind="dispute_resolved").payload
    assert resolution["resolution"] == "void" and resolution["by"] == "boss"
    assert play.messages("public", since=since) == [{"type": "void", "reason": "shoe fault"}]
    assert Round.objects.count() == rounds  # no second new round
    assert [h["round"] for h in player_history(play.station("s1"))] == []  # not a result
    again = play.tablet(type="void_round", reason="again", round=round.pk, supervisor=SUPERVISOR)
    assert again["error"]["code"] == "already_void"


def test_a_settled_round_voided_in_its_window_without_a_dispute(play):
    round = settled_round(play)
    voided = play.tablet(
        type="void_round", reason="cards out of order", round=round.pk, supervisor=SUPERVISOR
    )
    assert voided["ok"], voided
    assert play.credits("s1") == D("100.00") and play.credits("s2") == D("100.00")
    assert not RoundEvent.objects.filter(round=round, kind="dispute_resolved").exists()


def test_a_halted_round_in_play_is_voided_and_the_table_goes_on(new_play):
    play = new_play(is_open=True)
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C")
    assert play.send("s1", type="dispute")["ok"]
    voided = play.tablet(type="void_round", reason="misdeal", round=round.pk, supervisor=SUPERVISOR)
    assert voided["ok"], voided
    assert play.credits("s1") == D("100.00")
    assert Round.objects.filter(table=play.table, phase="betting").count() == 1  # the next
    assert voided["state"]["disputes"] == []
    assert RoundEvent.objects.get(round=round, kind="dispute_resolved").payload["reason"] == (
        "misdeal"
    )
