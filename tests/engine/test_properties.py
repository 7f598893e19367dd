"""Property tests of the rules engine over random rules, shoes, bets and decisions.

Each example plays one whole round. The stations choose among the decisions
the engine says are allowed (or let the timer run out), each from its own
random stream, so that the same station makes the same choices whatever
order the stations are listed or asked in.
"""

import random
from collections import Counter
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from payouts.specials import BETS, Paytables
from payouts.specials.defaults import default_paytable
from rounds.engine import ALL_CARDS, Bet, Burn, CardDrawn, Decision, Phase, Round, RuleSet, Timeout
from rounds.engine.round import BonusAssigned

PAYTABLES = Paytables({code: default_paytable(code) for code in BETS})

RULES = st.builds(
    RuleSet,
    decks=st.integers(1, 8),
    dealer_hits_soft_17=st.booleans(),
    hole_card=st.booleans(),
    peek=st.booleans(),
    obo=st.booleans(),
    blackjack_pays=st.sampled_from(["3:2", "6:5", "1:1"]),
    double_on=st.sampled_from(["any", "9-11", "10-11"]),
    double_after_split=st.booleans(),
    double_after_hit=st.booleans(),
    double_for_less=st.booleans(),
    max_splits=st.integers(0, 3),
    resplit_aces=st.booleans(),
    hit_split_aces=st.booleans(),
    split_unlike_tens=st.booleans(),
    late_surrender=st.booleans(),
    surrender_after_split=st.booleans(),
    insurance=st.booleans(),
    even_money=st.booleans(),
    auto_stand=st.sampled_from(["hard21", "21"]),
    charlie=st.one_of(st.none(), st.integers(3, 7)),
    dealer_draws_to_end=st.booleans(),
    timeout_action=st.sampled_from(["stand", "hit_soft"]),
)
STAKES = st.sampled_from(["1", "5", "7.05", "10", "25", "0.03", "99.99"])
SPECIALS = st.lists(st.sampled_from(sorted(BETS)), max_size=4, unique=True)
TABLES = st.dictionaries(
    keys=st.sampled_from(["s1", "s2", "s3", "s4", "s5"]),
    values=st.tuples(
        st.sampled_from(["0", "20", "150", "1000"]),  # credits beyond the stakes
        st.dictionaries(st.integers(1, 3), st.tuples(STAKES, SPECIALS), min_size=1, max_size=3),
    ),
    min_size=1,
    max_size=5,
)


class Table:
    """Plays one round to the end and records everything the stations were shown."""

    def __init__(self, rules, table, shoe_seed, burn, order):
        self.rules = rules
        stations = list(table)
        if order:
            stations.reverse()
        bets = []
        for s in stations:
            for box, (stake, specials) in sorted(table[s][1].items()):
                bets.append(Bet(s, box, "main", Decimal(stake)))
                for code in specials:  # same stake as the main bet: within every placement rule
                    if code != "top_21+3" or "21+3" in specials:
                        bets.append(Bet(s, box, code, Decimal(stake)))
        self.credits = {s: Decimal(table[s][0]) for s in stations}
        for bet in bets:
            self.credits[bet.station] += bet.stake
        self.round = Round(rules, bets, self.credits, boxes=3, paytables=PAYTABLES)
        shoe = [c for c in ALL_CARDS for _ in range(rules.decks)]
        random.Random(shoe_seed).shuffle(shoe)
        self.shoe = shoe
        self.burn = burn
        self.choosers = {s: random.Random(f"{shoe_seed}:{s}") for s in stations}
        self.notices = []  # (drawn cards so far, notice)
        self.views = []  # (hole card dealt and hidden?, view) seen by stations
        self.hole_index: int | None = None

    def play(self) -> Round:
        rnd, shoe = self.round, iter(self.shoe)
        for _ in range(self.burn):
            self._apply(Burn(next(shoe)))
        for _ in range(10_000):
            if rnd.settled:
                return rnd
            for station, box, multipliers in rnd.awaiting_bonus:
                order = list(multipliers)
                self.choosers[station].shuffle(order)
                self._apply(BonusAssigned(station, box, tuple(order)))
            if rnd.phase is Phase.BONUS:
                for station in rnd.prompted_stations:
                    pick = self.choosers[station].choice(["pick_1", "pick_2", "pick_3", "timeout"])
                    self._apply(Timeout(station) if pick == "timeout" else Decision(station, pick))
                continue
            if rnd.awaiting_card is not None:
                if rnd.awaiting_card == "hole":
                    self.hole_index = len(rnd.drawn)
                self._apply(CardDrawn(next(shoe)))
                continue
            for station in rnd.prompted_stations:
                prompt = rnd.prompt_for(station)
                choice = self.choosers[station].choice(prompt["allowed"] + ["timeout"])
                self._apply(Timeout(station) if choice == "timeout" else Decision(station, choice))
        raise AssertionError("the round did not end")

    def _apply(self, event) -> None:
        for notice in self.round.apply(event):
            self.notices.append((list(self.round.drawn), self.round.hole_revealed, notice))
        for station in self.round.seats:
            hidden = len(self.round.dealer) >= 2 and not self.round.hole_revealed
            self.views.append((hidden, self.round.station_view(station)))


def card_strings(value) -> list[str]:
    """Every card-looking string anywhere in a message or view."""
    found = []
    if isinstance(value, dict):
        for item in value.values():
            found += card_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found += card_strings(item)
    elif (
        isinstance(value, str)
        and len(value) == 2
        and value[1] in "SHDC"
        and value[0] in "A23456789TJQK"
    ):
        found.append(value)
    return found


tables = given(rules=RULES, table=TABLES, shoe_seed=st.integers(0, 2**32), burn=st.integers(0, 2))
slow = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@slow
@tables
def test_credits_are_conserved(rules, table, shoe_seed, burn) -> None:
    rnd = Table(rules, table, shoe_seed, burn, order=False).play()
    house = Decimal(0)
    for station, seat in rnd.seats.items():
        staked = sum(h.stake for h in seat.hands) + sum(h.insurance or 0 for h in seat.hands)
        staked += sum(b.stake for b in seat.specials)
        returned = sum(h.returned for h in seat.hands) + sum(
            h.insurance_returned for h in seat.hands
        )
        returned += sum(b.returned for b in seat.specials)
        assert all(b.settled for b in seat.specials)
        assert seat.credits == rnd.starting_credits[station] - staked + returned
        assert seat.credits >= 0
        house += staked - returned
        for hand in seat.hands:
            assert hand.result is not None
            assert hand.returned == hand.returned.quantize(Decimal("0.01"))
            assert 0 <= hand.returned <= hand.stake * Decimal("2.5")
    total_start = sum(rnd.starting_credits.values())
    assert total_start == sum(s.credits for s in rnd.seats.values()) + house


@slow
@tables
def test_no_card_is_used_twice_and_every_card_goes_somewhere(rules, table, shoe_seed, burn) -> None:
    play = Table(rules, table, shoe_seed, burn, order=False)
    rnd = play.play()
    assert rnd.drawn == play.shoe[: len(rnd.drawn)]  # cards leave the shoe once each, in order
    assert all(n <= rules.decks for n in Counter(rnd.drawn).values())
    placed = list(rnd.burned) + list(rnd.dealer) + [c for cs in rnd.box_cards.values() for c in cs]
    step_cards = [n.message["card"] for _, _, n in play.notices if n.message.get("to") == "hands"]
    assert Counter(str(c) for c in placed) + Counter(step_cards) == Counter(
        str(c) for c in rnd.drawn
    )
    for seat in rnd.seats.values():
        for hand in seat.hands:
            assert Counter(str(c) for c in hand.cards) <= Counter(
                [str(c) for c in rnd.box_cards[hand.box]] + step_cards
            )


@slow
@tables
def test_every_round_ends_with_every_hand_settled(rules, table, shoe_seed, burn) -> None:
    rnd = Table(rules, table, shoe_seed, burn, order=False).play()
    assert rnd.settled
    assert rnd.awaiting_card is None and rnd.prompted_stations == []
    assert all(h.finished and h.result for s in rnd.seats.values() for h in s.hands)


@slow
@tables
def test_results_do_not_depend_on_the_order_of_stations(rules, table, shoe_seed, burn) -> None:
    first = Table(rules, table, shoe_seed, burn, order=False).play()
    second = Table(rules, table, shoe_seed, burn, order=True).play()
    assert first.dealer == second.dealer
    for station in table:
        assert first.settlement(station) == second.settlement(station)


@slow
@tables
def test_no_station_sees_the_hole_card_before_it_is_revealed(rules, table, shoe_seed, burn) -> None:
    play = Table(rules, table, shoe_seed, burn, order=False)
    rnd = play.play()
    if play.hole_index is None:
        return  # no hole card at this table
    public_draws = [str(c) for i, c in enumerate(rnd.drawn) if i != play.hole_index]
    for drawn, revealed, notice in play.notices:
        if revealed:
            continue
        assert notice.message.get("type") != "hole_card"
        if notice.message.get("type") == "hole_card_dealt":
            assert "card" not in notice.message
        assert set(card_strings(notice.message)) <= set(public_draws[: len(drawn)])
    for hidden, view in play.views:
        if hidden:
            assert len(view["dealer"]["cards"]) == 1
            assert set(card_strings(view)) <= set(public_draws)


def _kind(card) -> str:
    """What the dealer's peek can tell of a hole card: an ace, a ten-value, or neither."""
    return "ace" if card.is_ace else "ten" if card.is_ten_value else "other"


def _before_the_reveal(play: "Timed") -> tuple[list, list, list]:
    """Everything the stations were shown while the hole card was down, and the table's
    steps meanwhile (the phase, the step and who is asked: what the server times)."""
    notices = [notice.message for _drawn, revealed, notice in play.notices if not revealed]
    views = [view for hidden, view in play.views if hidden]
    return notices, views, [step for hidden, step in play.steps if hidden]


class Timed(Table):
    """A Table that also records the step after every input."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps: list = []

    def _apply(self, event) -> None:
        super()._apply(event)
        rnd = self.round
        hidden = len(rnd.dealer) >= 2 and not rnd.hole_revealed
        self.steps.append((hidden, (rnd.phase, rnd.step, tuple(rnd.prompted_stations))))


@slow
@tables
def test_nothing_shown_or_timed_before_the_reveal_depends_on_the_hole_card(
    rules, table, shoe_seed, burn
) -> None:
    """Issue 17, hidden information by timing: two rounds that differ only in the hole card
    (another card the dealer's peek cannot tell from it) show every station the same
    notices, views and questions, step by step, until the hole card is revealed. The
    server's timers follow the steps alone (``writer.timer_seconds``: by phase), so no
    deadline, prompt or pause says anything about the card either."""
    first = Timed(rules, table, shoe_seed, burn, order=False)
    rnd = first.play()
    if first.hole_index is None:
        return  # no hole card at this table
    hole = first.shoe[first.hole_index]
    # A card never drawn in the first round, of the same kind and another rank or suit.
    unseen = [
        i
        for i in range(len(rnd.drawn), len(first.shoe))
        if _kind(first.shoe[i]) == _kind(hole) and str(first.shoe[i]) != str(hole)
    ]
    if not unseen:
        return
    swap = unseen[shoe_seed % len(unseen)]
    second = Timed(rules, table, shoe_seed, burn, order=False)
    shoe = second.shoe
    shoe[first.hole_index], shoe[swap] = shoe[swap], shoe[first.hole_index]
    second.play()
    assert second.round.drawn[first.hole_index] is not None
    assert str(second.round.drawn[first.hole_index]) != str(hole)
    assert _before_the_reveal(second) == _before_the_reveal(first)
