"""Correcting cards: the round replayed with the right card, the outcome and the ledger to
the cent (before and after the settlement), refusals that change nothing, and the hole card
that never reaches a station early."""

import json
from decimal import Decimal as D

import pytest

from croupier import tablet_state
from croupier.services import current_shoe
from payouts.models import LedgerEntry
from rounds import writer
from rounds.models import Bet, Hand, Round, RoundEvent
from rounds.recall import recall
from rounds.replay import rebuild
from tablehub.models import Table

pytestmark = pytest.mark.django_db
SUPERVISOR = {"username": "boss", "password": "boss-pw"}


def entries(round, name=None):
    rows = LedgerEntry.objects.filter(round=round, station__isnull=False)
    if name:
        rows = rows.filter(station__name=name)
    return sorted((e.key.split(":", 2)[2], e.amount) for e in rows)


def hands(round):
    return [
        (h.station.name, h.cards, h.stake, h.result, h.returned)
        for h in Hand.objects.filter(round=round).select_related("station").order_by("station")
    ]


def test_a_correction_after_the_settlement_pays_the_corrected_round(new_play, snapshot):
    play = new_play(is_open=True)
    round = play.open(s1=(1, "10"), s2=(2, "10"))
    play.close(round)
    # box 1: 9S 8H = 17; box 2: 8D 3C = 11, doubled, 9H = 20; dealer 6C QH, draws 4S: 20.
    play.deal("9S", "8D", "6C", "8H", "3C", "QH")
    play.decide("s1", "stand")
    play.decide("s2", "double")
    play.deal("9H", "4S")
    round.refresh_from_db()
    settled_at = round.settled_at
    assert round.phase == "settled"
    assert play.credits("s1") == D("90.00")  # lost 10
    assert play.credits("s2") == D("100.00")  # doubled to 20, pushed
    next_round = Round.objects.get(table=play.table, phase="betting")

    # s2 disputes the dealer's third card; the supervisor corrects it: TS, not 4S.
    assert play.send("s2", type="dispute")["ok"]
    since = len(play.sent)
    fixed = play.tablet(
        type="resolve_dispute",
        resolution="correct",
        round=round.pk,
        position=8,
        card="TS",
        reason="the reader read 4S",
        supervisor=SUPERVISOR,
    )
    assert fixed["ok"], fixed
    round.refresh_from_db()
    assert round.phase == "settled" and round.settled_at == settled_at and round.step_key == ""
    assert play.credits("s1") == D("110.00")  # 17 beats a busted dealer: 20 back
    assert play.credits("s2") == D("120.00")  # 20 beats it too: 40 back
    correction = RoundEvent.objects.get(round=round, kind="correction")
    assert correction.payload == {
        "changes": [
            {
                "seq": correction.payload["changes"][0]["seq"],
                "position": 8,
                "was": "4S",
                "card": "TS",
            }
        ],
        "by": "boss",
        "requested_by": "dealer",
        "reason": "the reader read 4S",
        "dispute": RoundEvent.objects.get(round=round, kind="dispute").seq,
    }
    c = correction.seq
    assert entries(round, "s1") == sorted(
        [
            ("s1:bet:1:main", D("-10.00")),
            ("s1:s1/1/1:return", D("20.00")),  # missing: added
        ]
    )
    assert entries(round, "s2") == sorted(
        [
            ("s2:bet:2:main", D("-10.00")),
            ("s2:s2/2/1:double", D("-10.00")),
            ("s2:s2/2/1:return", D("20.00")),
            ("s2:s2/2/1:return:corrected", D("-20.00")),  # the push taken back
            (f"s2:s2/2/1:return:c{c}", D("40.00")),  # the win
        ]
    )
    total = sum(e.amount for e in LedgerEntry.objects.filter(round=round))
    assert total == 0  # every movement has its house side
    assert hands(round) == [
        ("s1", ["9S", "8H"], D("10.00"), "win", D("20.00")),
        ("s2", ["8D", "3C", "9H"], D("20.00"), "win", D("40.00")),
    ]
    # What the stations received: the correction, and each its own new state.
    assert play.messages("public", since=since)[0] == {
        "type": "corrected",
        "round": round.pk,
        "positions": [8],
    }
    for name, credits, won in (("s1", "110.00", "20.00"), ("s2", "120.00", "40.00")):
        [pushed] = [m for m in play.messages(name, since=since) if m["type"] == "state"]
        assert pushed["state"]["credits"] == credits
        assert pushed["state"]["last_round"] == round.pk and pushed["state"]["last_win"] == won
        assert pushed["state"]["dealer_history"][0] == {
            "round": round.pk,
            "number": round.number,
            "total": 26,
            "bust": True,
            "blackjack": False,
        }
    resumed = [m for m in play.messages("public", since=since) if m["type"] == "resumed"]
    assert resumed == [
        {"type": "resumed", "round": round.pk, "resolution": "correct", "deadline": None}
    ]
    # The replay from the log alone gives the corrected round.
    writer.forget_cached_engines()
    engine = rebuild(Round.objects.get(pk=round.pk))
    assert engine.dealer_outcome() == {
        "cards": ["6C", "QH", "TS"],
        "total": 26,
        "blackjack": False,
        "bust": True,
    }
    assert engine.settlement("s2")["hands"][0]["returned"] == "40.00"
    # The next round was not touched, and no other round opened.
    assert list(Round.objects.filter(table=play.table, phase="betting")) == [next_round]
    # The tablet lists the corrected card with what was logged first.
    state = play.tablet(type="state")["state"]
    card = state["previous"]["cards"][7]
    assert (card["card"], card["corrected_from"], card["label"]) == ("TS", "4S", "dealer")

    # A second correction of the same card writes the amounts again, never a key twice.
    again = play.tablet(
        type="correct_card", round=round.pk, position=8, card="5S", supervisor=SUPERVISOR
    )
    assert again["ok"], again
    assert play.credits("s1") == D("90.00")  # dealer 21: both lose
    assert play.credits("s2") == D("80.00")
    assert sum(e.amount for e in LedgerEntry.objects.filter(round=round)) == 0
    writer.forget_cached_engines()
    assert rebuild(round).dealer_outcome()["total"] == 21
    before = snapshot(round)
    same = play.tablet(
        type="correct_card", round=round.pk, position=8, card="5S", supervisor=SUPERVISOR
    )
    assert same["error"]["code"] == "invalid"
    assert snapshot(round) == before


def test_a_correction_before_the_settlement_changes_a_special_bet_and_the_hand(play):
    round = play.open(s1=(1, "10"))
    assert play.send("s1", type="place", box=1, bet="pair", amount="5")["ok"]
    play.close(round)
    play.deal("8S", "6C", "8H", "QH")  # a pair of eights: the pair bet pays 8:1 at once
    assert play.credits("s1") == D("130.00")  # 100 - 15 + 45
    assert play.send("s1", type="dispute")["ok"]

    since = len(play.sent)
    fixed = play.tablet(
        type="resolve_dispute",
        resolution="correct",
        changes=[{"position": 3, "card": "7H"}],
        supervisor=SUPERVISOR,
    )
    assert fixed["ok"], fixed
    assert play.credits("s1") == D("85.00")  # no pair: the 45 taken back
    assert entries(round) == sorted(
        [
            ("s1:bet:1:main", D("-10.00")),
            ("s1:bet:1:pair", D("-5.00")),
            ("s1:special:1:pair:return", D("45.00")),
            ("s1:special:1:pair:return:corrected", D("-45.00")),
        ]
    )
    [pushed] = [m for m in play.messages("s1", since=since) if m["type"] == "state"]
    hand = pushed["state"]["table"]["station"]["hands"][0]
    assert (hand["cards"], hand["total"]) == (["8S", "7H"], 15)
    assert "split" not in pushed["state"]["table"]["station"]["prompt"]["allowed"]
    assert pushed["state"]["credits"] == "85.00" and pushed["state"]["round"]["halted"] is False

    play.decide("s1", "stand")
    play.deal("9D")  # dealer 6C QH 9D: 25, bust
    round.refresh_from_db()
    assert round.phase == "settled"
    assert play.credits("s1") == D("105.00")
    pair = Bet.objects.get(round=round, code="pair")
    assert (pair.combination, pair.returned) == ("", D("0.00"))
    writer.forget_cached_engines()
    assert rebuild(round).settlement("s1")["hands"][0]["cards"] == ["8S", "7H"]


def test_a_correction_that_makes_a_later_decision_impossible_is_refused(play, snapshot):
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("8S", "6C", "8H", "QH")
    play.decide("s1", "split")
    play.deal("3D")  # the first hand: 8S 3D
    assert play.credits("s1") == D("80.00")
    assert play.send("s1", type="dispute")["ok"]
    before = snapshot(round)

    refused = play.tablet(
        type="resolve_dispute",
        resolution="correct",
        position=3,
        card="7H",
        supervisor=SUPERVISOR,
    )
    assert refused["error"]["code"] == "correction_refused", refused
    split = RoundEvent.objects.get(round=round, kind="decision").seq
    assert refused["error"]["message"] == (
        f"with this correction, event {split} (station s1's split) no longer applies: "
        "station s1, box 1: split needs two cards of the same value; nothing was changed"
    )
    impossible = play.tablet(
        type="correct_card", position=3, card="8S", supervisor=SUPERVISOR
    )  # a one-deck shoe has one 8S, already card 1
    assert impossible["error"]["code"] == "impossible_card", impossible
    nowhere = play.tablet(type="correct_card", position=9, card="2C", supervisor=SUPERVISOR)
    assert nowhere["error"]["code"] == "no_such_card"
    for wrong in ({"username": "boss", "password": "x"}, None):
        denied = play.tablet(type="correct_card", position=3, card="7H", supervisor=wrong)
        assert denied["error"]["code"] == "supervisor_required"
    assert snapshot(round) == before  # still halted, nothing written
    assert play.credits("s1") == D("80.00")

    go_on = play.tablet(type="resolve_dispute", resolution="continue", supervisor=SUPERVISOR)
    assert go_on["ok"], go_on
    assert play.send("s1", type="decide", action="stand")["ok"]


def test_a_misread_card_corrected_without_a_dispute(play, snapshot):
    round = play.open(s1=(1, "10"), s2=(2, "10"))
    play.close(round)
    play.deal("9S", "8D", "6C", "7H", "3C", "QH")
    round.refresh_from_db()
    key = round.step_key
    before = snapshot(round)
    dealer = play.tablet(
        type="correct_card",
        position=4,
        card="2H",
        supervisor={"username": "dealer", "password": "dealer-pw"},
    )
    assert dealer["error"]["code"] == "supervisor_required"
    assert snapshot(round) == before

    fixed = play.tablet(type="correct_card", position=4, card="2H", supervisor=SUPERVISOR)
    assert fixed["ok"], fixed
    round.refresh_from_db()
    correction = RoundEvent.objects.get(round=round, kind="correction")
    assert correction.payload["dispute"] is None
    assert round.step_key == f"{key}:g{correction.seq}"  # the step goes on, a fresh time
    assert play.run(writer.expire, round.pk, key) == []  # the timer before: nothing
    state = play.send("s1", type="state")["state"]
    assert state["table"]["station"]["hands"][0]["cards"] == ["9S", "2H"]
    assert "double" in state["table"]["station"]["prompt"]["allowed"]
    play.decide("s1", "double")  # 11: doubles
    play.decide("s2", "stand")
    play.deal("TD", "5S")  # s1: 21; the dealer: 6C QH 5S = 21
    assert play.credits("s1") == D("100.00")  # push on 20: back
    assert play.credits("s2") == D("90.00")
    writer.forget_cached_engines()
    assert rebuild(round).settlement("s1")["hands"][0]["cards"] == ["9S", "2H", "TD"]


def test_the_hole_card_never_reaches_a_station_early_even_corrected(play):
    round = play.open(s1=(1, "10"))
    play.close(round)
    start = len(play.sent)
    play.deal("9S", "6C", "7H", "QH")
    assert play.send("s1", type="dispute")["ok"]
    fixed = play.tablet(
        type="resolve_dispute",
        resolution="correct",
        position=4,
        card="TH",
        supervisor=SUPERVISOR,
    )
    assert fixed["ok"], fixed
    hole = fixed["state"]["round"]["cards"][3]
    assert hole == {
        "n": 4,
        "seq": hole["seq"],
        "card": None,
        "to": "hole",
        "label": "hole (face down)",
    }
    assert "TH" not in json.dumps(fixed["state"]) and "QH" not in json.dumps(fixed["state"])
    record = json.dumps(recall(round))  # game recall hides what the table hides
    assert "TH" not in record and "QH" not in record
    for name in ("s1", "s2"):
        state = play.send(name, type="state")["state"]
        assert "TH" not in json.dumps(state) and "QH" not in json.dumps(state)
        assert state["table"]["dealer"] == {"cards": ["6C"], "hole_card": "face_down"}
    play.decide("s1", "stand")  # the dealer's turn: the hole card is turned
    seen = [json.dumps(m) for _round, _seq, _to, m in play.sent[start:]]  # public and private
    reveal = next(i for i, m in enumerate(seen) if '"type": "hole_card"' in m)
    assert all("TH" not in m and "QH" not in m for m in seen[:reveal])
    assert json.loads(seen[reveal]) == {"type": "hole_card", "card": "TH"}
    play.deal("2D")  # 6C TH 2D: 18
    round.refresh_from_db()
    assert round.phase == "settled" and play.credits("s1") == D("90.00")
    state = tablet_state.croupier_state(play.table)
    hole = state["round"]["cards"][3]
    assert (hole["card"], hole["corrected_from"], hole["label"]) == ("TH", "QH", "hole (shown)")
    record = recall(round)
    assert record["cards"][3] == {
        "seq": hole["seq"],
        "card": "TH",
        "corrected_from": "QH",
        "to": "hole",
    }
    assert [i["kind"] for i in record["interventions"]] == [
        "dispute",
        "correction",
        "dispute_resolved",
    ]
    assert record["interventions"][1]["changes"][0] | {"seq": 0} == {
        "seq": 0,
        "position": 4,
        "was": "QH",
        "card": "TH",
    }
    assert record["dealer"]["cards"] == ["6C", "TH", "2D"]


def test_an_exposed_card_is_taken_out_of_play_and_the_next_card_takes_its_place(play):
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C", "7H", "QH")  # the hole card was turned face up by mistake
    out = play.tablet(type="correct_card", position=4, burn=True, supervisor=SUPERVISOR)
    assert out["ok"], out
    state = out["state"]
    assert state["awaiting"] == "deal the hole card"
    assert state["round"]["cards"][3] == {
        "n": 4,
        "seq": state["round"]["cards"][3]["seq"],
        "card": "QH",
        "to": "out",
        "label": "taken out of play",
    }
    play.deal("KD")  # the next card is the hole card
    play.decide("s1", "stand")
    play.deal("4C")  # 6C KD 4C: 20
    round.refresh_from_db()
    assert round.phase == "settled" and play.credits("s1") == D("90.00")
    writer.forget_cached_engines()
    assert rebuild(round).dealer_outcome()["cards"] == ["6C", "KD", "4C"]
    assert current_shoe(play.table).cards_drawn == 6  # QH left the shoe too


def test_at_a_table_with_a_cut_card_the_shoe_keeps_count(play):
    Table.objects.filter(pk=play.table.pk).update(shuffler=Table.Shuffler.CUT_CARD)
    play.table.refresh_from_db()
    first = play.open(s1=(1, "10"))
    play.close(first)
    play.deal("9S", "6C", "TH", "7D")
    play.decide("s1", "stand")
    play.deal("5S")
    second = play.open(s1=(1, "10"))
    play.close(second)
    play.deal("8S", "2C", "8H")
    # 9S left this one-deck shoe in the first round: it cannot be card 3 of the second.
    refused = play.tablet(type="correct_card", position=3, card="9S", supervisor=SUPERVISOR)
    assert refused["error"]["code"] == "impossible_card", refused
    fixed = play.tablet(type="correct_card", position=3, card="4H", supervisor=SUPERVISOR)
    assert fixed["ok"], fixed
    drawn = current_shoe(play.table).drawn
    assert (drawn.get("8H", 0), drawn["4H"], drawn["9S"]) == (0, 1, 1)
    # A card of the first round, corrected: the count moves in the same shoe.
    settled = play.tablet(
        type="correct_card", round=first.pk, position=5, card="6S", supervisor=SUPERVISOR
    )
    assert settled["ok"], settled  # dealer 6C 7D 6S: 19, and s1's 19 pushes
    drawn = current_shoe(play.table).drawn
    assert (drawn.get("5S", 0), drawn["6S"]) == (0, 1)
    assert play.credits("s1") == D("90.00")  # a push in the first (10 back), 10 on the second


# -- issue 17, finding 6: a correction is no hole-card oracle ------------------------------------


def face_down(new_play, name):
    """A round in play at a new one-deck table: box 1 9S 7H, the dealer 6C up, QH face down."""
    play = new_play(is_open=True, name=name)
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C", "7H", "QH")
    return play, round


def test_correcting_the_face_down_hole_card_answers_the_same_whatever_the_guess(new_play):
    """Right or wrong, the guess is applied and logged the same way: "card 4 is QH already"
    answered only the right guess (52 tries found the hole card)."""
    answers = []
    for n, guess in enumerate(("QH", "KD")):
        play, round = face_down(new_play, f"t{n}")
        since = len(play.sent)
        fixed = play.tablet(type="correct_card", position=4, card=guess, supervisor=SUPERVISOR)
        assert fixed["ok"], fixed
        assert "QH" not in json.dumps(fixed) and guess not in json.dumps(fixed)
        told = [  # what the table was told, without the ids and times
            (to, m["type"], m.get("positions"), m.get("state", {}).get("table"))
            for _round, _seq, to, m in play.sent[since:]
        ]
        correction = RoundEvent.objects.get(round=round, kind="correction").payload["changes"]
        assert correction == [{"seq": 5, "position": 4, "was": "QH", "card": guess}]
        fixed["state"]["round"].pop("id")
        fixed["state"]["round"].pop("deadline")  # a fresh step time after the correction
        fixed["state"].pop("now")
        fixed["state"]["table"].pop("id")
        fixed["state"]["table"].pop("name")
        fixed["state"]["shoe"].pop("id")
        fixed["state"]["shoe"].pop("started_at")
        answers.append((fixed, told))
    assert answers[0][0] == answers[1][0]
    assert answers[0][1] == answers[1][1]


def test_a_refusal_names_the_face_down_hole_card_by_its_position_only(new_play):
    """A one-deck shoe: making card 1 the hole card's twin is refused, and the refusal named
    it ("event 5 (card 4, QH) no longer applies: QH drawn 2 times")."""
    play, round = face_down(new_play, "t1")
    refused = play.tablet(type="correct_card", position=1, card="QH", supervisor=SUPERVISOR)
    assert refused["error"]["code"] == "impossible_card", refused
    assert refused["error"]["message"] == (
        "with this correction, event 5 (card 4, the hole card) no longer applies: the hole "
        "card drawn 2 times, but a 1-deck shoe holds 1; nothing was changed"
    )
    assert RoundEvent.objects.filter(round=round, kind="correction").count() == 0
