"""A dispute halts the round for everyone (nothing is accepted, timers stop) until a supervisor
lets it go on; who may dispute, and when."""

from datetime import timedelta
from decimal import Decimal as D

import pytest
from django.utils import timezone

from croupier.services import current_shoe
from croupier.tablet_state import croupier_state
from rounds import writer
from rounds.models import Round, RoundEvent
from rounds.replay import rebuild
from tablehub.models import Table
from tests.test_protocol_contract import validator

pytestmark = pytest.mark.django_db
SUPERVISOR = {"username": "boss", "password": "boss-pw"}


def dealt(play):
    """Box 1 (s1): 9S 7H = 16; box 2 (s2): 8D 3C = 11; dealer 6C up, QH in the hole."""
    round = play.open(s1=(1, "10"), s2=(2, "10"))
    play.close(round)
    play.deal("9S", "8D", "6C", "7H", "3C", "QH")
    round.refresh_from_db()
    assert round.phase == "play" and round.step_key == "play:1" and round.deadline
    return round


def test_a_dispute_halts_everything_and_the_round_goes_on_after_continue(play, snapshot):
    round = dealt(play)
    old_key, old_deadline = round.step_key, round.deadline
    since = len(play.sent)

    reply = play.send("s1", type="dispute")
    assert reply["ok"], reply
    assert reply["state"]["round"]["halted"] is True
    assert reply["state"]["dispute"] == {
        "round": round.pk,
        "number": round.number,
        "until": None,
        "halted": True,
    }
    round.refresh_from_db()
    assert round.step_key.startswith("halted:") and round.deadline is None
    row = RoundEvent.objects.get(round=round, kind="dispute")
    assert row.payload == {
        "station": "s1",
        "phase": "play",
        "step_key": "play:1",
        "deadline": old_deadline.isoformat(),
    }
    assert play.messages("public", since=since) == [
        {"type": "halted", "reason": "dispute", "round": round.pk}
    ]

    # Nothing is accepted, and nothing changes: a decision, a card, the timers.
    before = snapshot(round)
    reader = current_shoe(play.table).reader_seq
    refused = play.send("s2", type="decide", action="double")
    assert refused["error"]["code"] == "round_halted", refused
    card = play.tablet(type="manual_card", card="5D")
    assert card["error"]["code"] == "round_halted", card
    assert play.run(writer.expire, round.pk, old_key) == []
    Round.objects.filter(pk=round.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert play.run(writer.expire_if_late, round.pk) == []
    Round.objects.filter(pk=round.pk).update(deadline=None)
    assert snapshot(round) == before
    assert current_shoe(play.table).reader_seq == reader
    assert play.credits("s1") == D("90.00") and play.credits("s2") == D("90.00")
    again = play.send("s2", type="dispute")
    assert again["error"]["code"] == "already_halted"

    # The tablet shows the dispute: who, when, the round.
    state = play.tablet(type="state")["state"]
    assert state["awaiting"] == "dispute: wait for a supervisor"
    assert state["round"]["halted"] is True
    dispute = state["round"]["dispute"]
    assert (dispute["round"], dispute["station"], dispute["seq"]) == (round.pk, "s1", row.seq)
    assert dispute["at"] == row.created_at.isoformat()
    assert state["disputes"] == [{k: v for k, v in dispute.items() if k != "resolved"}]

    # The supervisor lets the round go on: a fresh step time under a new key.
    since = len(play.sent)
    wrong = play.tablet(
        type="resolve_dispute",
        resolution="continue",
        supervisor={"username": "boss", "password": "nope"},
    )
    assert wrong["error"]["code"] == "supervisor_required"
    dealer = play.tablet(
        type="resolve_dispute",
        resolution="continue",
        supervisor={"username": "dealer", "password": "dealer-pw"},
    )
    assert dealer["error"]["code"] == "supervisor_required"
    assert snapshot(round) == before
    started = timezone.now()
    ok = play.tablet(type="resolve_dispute", resolution="continue", supervisor=SUPERVISOR)
    assert ok["ok"], ok
    round.refresh_from_db()
    assert round.step_key == f"play:1:r{round.last_seq}"
    assert round.deadline >= started + timedelta(seconds=14)  # the whole 15 s again
    resolved = RoundEvent.objects.get(round=round, kind="dispute_resolved")
    assert resolved.payload == {
        "dispute": row.seq,
        "resolution": "continue",
        "by": "boss",
        "requested_by": "dealer",
    }
    assert play.messages("public", since=since) == [
        {
            "type": "resumed",
            "round": round.pk,
            "resolution": "continue",
            "deadline": round.deadline.isoformat(),
        }
    ]
    assert ok["state"]["round"]["halted"] is False and ok["state"]["disputes"] == []
    assert ok["state"]["round"]["disputes"][0]["resolved"]["resolution"] == "continue"
    assert play.run(writer.expire, round.pk, old_key) == []  # the old timer: nothing

    # The round goes on from where it stopped: s2 doubles, s1's timer stands for it.
    play.decide("s2", "double")
    play.run(writer.expire, round.pk, round.step_key)  # s1 times out: stands
    play.deal("9H", "5S")  # s2's double card (20); the dealer draws 5S: 21
    round.refresh_from_db()
    assert round.phase == "settled"
    assert play.credits("s1") == D("90.00") and play.credits("s2") == D("80.00")
    assert rebuild(round).dealer_outcome()["total"] == 21


def test_who_may_dispute_and_when(play, new_play, snapshot):
    round = play.open(s1=(1, "10"))
    early = play.send("s1", type="dispute")
    assert early["error"]["code"] == "no_round"  # betting: nothing of s1's to dispute yet
    play.close(round)
    none_yet = play.send("s1", type="dispute")
    assert none_yet["error"]["code"] == "no_card_yet"
    play.deal("9S")
    stranger = play.send("s2", type="dispute", round=round.pk)
    assert stranger["error"]["code"] == "not_in_round"
    other = play.send("s1", type="dispute", round=round.pk + 1000)
    assert other["error"]["code"] == "no_round"
    bad = play.send("s1", type="dispute", round="x")
    assert bad["error"]["code"] == "bad_message"
    assert RoundEvent.objects.filter(kind="dispute").count() == 0

    closed = new_play(allowed=False, name="t2")
    round2 = closed.open(s1=(1, "10"))
    closed.close(round2)
    closed.deal("9S")
    before = snapshot(round2)
    refused = closed.send("s1", type="dispute")
    assert refused["error"]["code"] == "disputes_not_allowed"
    assert refused["error"]["message"] == "station s1: disputes are not allowed at this table"
    assert snapshot(round2) == before
    assert closed.send("s1", type="state")["state"]["dispute"] is None

    # "Dispute is only possible on live tables with the Croupier Interface" (seed 001, 3.7).
    Table.objects.filter(pk=play.table.pk).update(mode=Table.Mode.VIDEO)
    video = play.send("s1", type="dispute", round=round.pk)
    assert video["error"]["code"] == "disputes_not_allowed"


def test_after_the_window_results_are_final(play, new_play, snapshot):
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C", "TH", "7D")  # 19 against 13; s1 stands, the dealer draws
    play.decide("s1", "stand")
    play.deal("5S")  # dealer 18: s1 wins 20
    round.refresh_from_db()
    assert round.phase == "settled" and play.credits("s1") == D("110.00")
    state = play.send("s1", type="state")["state"]
    assert state["dispute"]["round"] == round.pk and state["dispute"]["halted"] is False
    end = round.settled_at + timedelta(seconds=60)
    assert state["dispute"]["until"] == end.isoformat()

    Round.objects.filter(pk=round.pk).update(settled_at=timezone.now() - timedelta(seconds=61))
    before = snapshot(round)
    late = play.send("s1", type="dispute")
    assert late["error"]["code"] == "dispute_window_closed", late
    void = play.tablet(type="void_round", reason="too late", round=round.pk, supervisor=SUPERVISOR)
    assert void["error"]["code"] == "dispute_window_closed"
    fix = play.tablet(
        type="correct_card", round=round.pk, position=5, card="TS", supervisor=SUPERVISOR
    )
    assert fix["error"]["code"] == "dispute_window_closed"
    assert snapshot(round) == before and play.credits("s1") == D("110.00")
    assert play.send("s1", type="state")["state"]["dispute"] is None

    # No window at all: a round may be disputed until it is settled, not after.
    none = new_play(window=0, name="t2")
    round2 = none.open(s1=(1, "10"))
    none.close(round2)
    none.deal("9S", "6C", "TH", "7D")
    none.decide("s1", "stand")
    none.deal("5S")
    refused = none.send("s1", type="dispute")
    assert refused["error"]["code"] == "dispute_window_closed"


def test_a_dispute_made_in_time_stays_open_after_the_window(play):
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C", "TH", "7D")
    play.decide("s1", "stand")
    play.deal("5S")
    assert play.send("s1", type="dispute")["ok"]
    Round.objects.filter(pk=round.pk).update(settled_at=timezone.now() - timedelta(seconds=61))
    state = play.tablet(type="state")["state"]
    assert [d["round"] for d in state["disputes"]] == [round.pk]
    ok = play.tablet(type="resolve_dispute", resolution="continue", supervisor=SUPERVISOR)
    assert ok["ok"], ok
    round.refresh_from_db()
    assert round.phase == "settled" and round.step_key == "" and round.deadline is None
    assert play.credits("s1") == D("110.00")
    nothing = play.tablet(type="resolve_dispute", resolution="continue", supervisor=SUPERVISOR)
    assert nothing["error"]["code"] == "no_dispute"


def test_the_tablets_disputes_are_as_the_protocols_schema_says(play):
    """The tablet's open dispute (``round.dispute``, the table's ``disputes``) and, once
    resolved, the round's resolved dispute: each field as docs/protocol.schema.json says."""
    tablet_state = validator("tablet_state")
    round = dealt(play)
    assert play.send("s1", type="dispute")["ok"]
    state = croupier_state(play.table)
    tablet_state.validate(state)
    assert [d["station"] for d in state["disputes"]] == ["s1"]
    assert state["round"]["dispute"]["resolved"] is None
    reply = play.tablet(type="resolve_dispute", resolution="continue", supervisor=SUPERVISOR)
    assert reply["ok"], reply
    state = croupier_state(play.table)
    tablet_state.validate(state)
    assert state["disputes"] == [] and state["round"]["dispute"] is None
    (resolved,) = state["round"]["disputes"]
    assert (resolved["round"], resolved["resolved"]["resolution"]) == (round.pk, "continue")
