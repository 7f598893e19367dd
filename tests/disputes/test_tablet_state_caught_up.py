"""The croupier tablet's state from its kept replay, brought up to date with the events since
the tablet last asked (croupier/tablet_state.py ``replayed``), is the state a whole replay
gives, at every step of a round with a misread card corrected, an exposed card taken out of
play, a dispute after the settlement and its correction, and the next round's bets."""

from croupier import tablet_state
from rounds.models import Round
from tests.disputes.test_corrections import SUPERVISOR


def _without_clock(state: dict) -> dict:
    return {key: value for key, value in state.items() if key != "now"}


def _same_as_a_whole_replay(play) -> dict:
    """The tablet asks (as tablet.js does after each change): its state from what it keeps,
    then the same from a whole replay."""
    reply = play.tablet(type="state")
    assert reply["ok"], reply
    tablet_state.forget_kept_states()
    assert _without_clock(reply["state"]) == _without_clock(tablet_state.croupier_state(play.table))
    play.tablet(type="state")  # kept again, for the next step to bring up to date
    return reply["state"]


def test_the_state_caught_up_is_the_state_replayed(play):
    round = play.open(s1=(1, "10"), s2=(2, "10"))
    _same_as_a_whole_replay(play)
    play.close(round)
    _same_as_a_whole_replay(play)
    for card in ("9S", "8D", "6C", "7H", "3C", "QH"):
        play.deal(card)
        _same_as_a_whole_replay(play)
    fixed = play.tablet(type="correct_card", position=4, card="2H", supervisor=SUPERVISOR)
    assert fixed["ok"], fixed
    state = _same_as_a_whole_replay(play)
    assert [c["card"] for c in state["round"]["cards"]] == ["9S", "8D", "6C", "2H", "3C", None]
    assert state["round"]["cards"][3]["corrected_from"] == "7H"
    play.decide("s1", "double")
    _same_as_a_whole_replay(play)
    play.decide("s2", "stand")
    _same_as_a_whole_replay(play)
    play.deal("TD")
    _same_as_a_whole_replay(play)
    play.deal("5S")  # s1: 9S 2H TD = 21; the dealer: 6C QH 5S = 21
    round.refresh_from_db()
    assert round.phase == "settled"
    state = _same_as_a_whole_replay(play)
    assert state["round"]["cards"][5]["label"] == "hole (shown)"
    # A dispute of the settled round, and the supervisor's correction of the dealer's card.
    assert play.send("s2", type="dispute")["ok"]
    state = _same_as_a_whole_replay(play)
    disputed = state["round"] if state["round"]["id"] == round.pk else state["previous"]
    assert disputed["halted"] and disputed["dispute"] is not None
    fixed = play.tablet(
        type="resolve_dispute",
        resolution="correct",
        round=round.pk,
        position=8,
        card="4S",
        reason="the reader read 5S",
        supervisor=SUPERVISOR,
    )
    assert fixed["ok"], fixed
    state = _same_as_a_whole_replay(play)
    shown = state["round"] if state["round"]["id"] == round.pk else state["previous"]
    assert shown["cards"][7]["card"] == "4S" and shown["cards"][7]["corrected_from"] == "5S"
    assert shown["disputes"][0]["resolved"]["resolution"] == "correct"
    following = Round.objects.filter(table=play.table, phase="betting").first()
    if following is None:
        following = play.open()
    assert play.send("s1", type="place", box=1, amount="5")["ok"]
    _same_as_a_whole_replay(play)


def test_an_exposed_card_taken_out_of_play_is_caught_up_too(play):
    round = play.open(s1=(1, "10"))
    play.close(round)
    play.deal("9S", "6C", "7H", "QH")
    _same_as_a_whole_replay(play)
    out = play.tablet(type="correct_card", position=4, burn=True, supervisor=SUPERVISOR)
    assert out["ok"], out
    state = _same_as_a_whole_replay(play)
    assert state["round"]["cards"][3]["to"] == "out"
    play.deal("KD")
    _same_as_a_whole_replay(play)
    play.decide("s1", "stand")
    play.deal("4C")
    state = _same_as_a_whole_replay(play)
    assert state["round"]["phase"] == "settled"
