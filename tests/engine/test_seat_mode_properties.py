"""Property tests of seat mode (rounds/engine/seating.py) over random rules, shoes, seats,
bets behind, follow choices and decisions, a seated player sometimes leaving mid-round:
money is conserved, no card is used twice, every round ends, the hole card reaches no
station early, only a seat's own station decides for it, seats play from the dealer's
left, and every bet behind holds its seat's cards."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from rounds.engine import CardDrawn, Decision, Phase, Seating, SeatLeft, Timeout
from tests.engine.test_properties import RULES, TABLES, Table, card_strings, slow


class SeatTable(Table):
    """A Table in seat mode: each box's first bettor (by name) sits there, every other
    station's bet on that box is a bet behind it; ``follow`` stations follow doubles and
    splits. A seated station may leave instead of answering."""

    def __init__(self, rules, table, shoe_seed, burn, follow):
        super().__init__(rules, table, shoe_seed, burn, order=False)
        owners: dict[int, str] = {}
        for bet in sorted(self.round.bets, key=lambda b: b.station):
            owners.setdefault(bet.box, bet.station)
        seating = Seating(
            owners,
            frozenset(s for s in table if follow.get(s)),
            None,
            frozenset(b.code for b in self.round.bets),
        )
        self.round = type(self.round)(
            rules,
            self.round.bets,
            self.credits,
            boxes=3,
            paytables=self.round.paytables,
            seating=seating,
        )
        self.play_prompts: list[tuple[str, int]] = []  # (station, box) of each play question

    def play(self):
        rnd, shoe = self.round, iter(self.shoe)
        for _ in range(10_000):
            if rnd.settled:
                return rnd
            for station, box, multipliers in rnd.awaiting_bonus:
                self._apply_bonus(station, box, multipliers)
            if rnd.phase is Phase.BONUS:
                for station in rnd.prompted_stations:
                    self._apply(Decision(station, "pick_1"))
                continue
            if rnd.awaiting_card is not None:
                if rnd.awaiting_card == "hole":
                    self.hole_index = len(rnd.drawn)
                self._apply(CardDrawn(next(shoe)))
                continue
            for station in rnd.prompted_stations:
                prompt = rnd.prompt_for(station)
                if rnd.phase is Phase.PLAY:
                    self.play_prompts.append((station, prompt["box"]))
                if station in rnd.left:
                    self._apply(Timeout(station))
                    continue
                choices = prompt["allowed"] + ["timeout"]
                if rnd.phase is Phase.PLAY:
                    choices.append("leave")
                choice = self.choosers[station].choice(choices)
                if choice == "leave":
                    self._apply(SeatLeft(station))
                elif choice == "timeout":
                    self._apply(Timeout(station))
                else:
                    self._apply(Decision(station, choice))
                if rnd.phase is Phase.PLAY:
                    break  # one seat at a time: look at the round again
        raise AssertionError("the round did not end")

    def _apply_bonus(self, station, box, multipliers):
        from rounds.engine.round import BonusAssigned

        order = list(multipliers)
        self.choosers[station].shuffle(order)
        self._apply(BonusAssigned(station, box, tuple(order)))


seat_tables = given(
    rules=RULES,
    table=TABLES,
    shoe_seed=st.integers(0, 2**32),
    follow=st.dictionaries(st.sampled_from(["s1", "s2", "s3", "s4", "s5"]), st.booleans()),
)


@slow
@seat_tables
def test_seat_mode_conserves_money_and_ends_every_round(rules, table, shoe_seed, follow):
    play = SeatTable(rules, table, shoe_seed, 0, follow)
    rnd = play.play()
    assert rnd.settled and rnd.awaiting_card is None and rnd.prompted_stations == []
    house = Decimal(0)
    for station, seat in rnd.seats.items():
        staked = sum(h.stake for h in seat.hands) + sum(h.insurance or 0 for h in seat.hands)
        staked += sum(b.stake for b in seat.specials)
        returned = sum(h.returned + h.insurance_returned for h in seat.hands)
        returned += sum(b.returned for b in seat.specials)
        assert seat.credits == rnd.starting_credits[station] - staked + returned
        assert seat.credits >= 0
        assert all(h.finished and h.result for h in seat.hands)
        house += staked - returned
    assert sum(rnd.starting_credits.values()) == sum(s.credits for s in rnd.seats.values()) + house
    assert rnd.drawn == play.shoe[: len(rnd.drawn)]
    assert all(n <= rules.decks for n in Counter(rnd.drawn).values())


@slow
@seat_tables
def test_only_the_seat_decides_seats_play_in_order_and_bets_behind_hold_its_cards(
    rules, table, shoe_seed, follow
):
    play = SeatTable(rules, table, shoe_seed, 0, follow)
    rnd = play.play()
    seats = rnd.seating.seats
    assert all(seats[box] == station for station, box in play.play_prompts)
    boxes = [box for _station, box in play.play_prompts]
    assert boxes == sorted(boxes)  # from the dealer's left, a seat done before the next
    for seat in rnd.seats.values():
        for hand in seat.hands:
            if hand.follows is not None:
                assert hand.cards == hand.follows.cards
                assert hand.stake in (
                    hand.main_stake,
                    hand.main_stake * 2,
                    hand.main_stake
                    + (hand.main_stake / 2).quantize(Decimal("0.01"), rounding="ROUND_DOWN"),
                )
                if seat.station not in rnd.seating.follow:
                    assert not hand.doubled and not hand.from_split


@slow
@seat_tables
def test_no_station_sees_the_hole_card_early_in_seat_mode(rules, table, shoe_seed, follow):
    play = SeatTable(rules, table, shoe_seed, 0, follow)
    rnd = play.play()
    if play.hole_index is None:
        return
    public_draws = [str(c) for i, c in enumerate(rnd.drawn) if i != play.hole_index]
    for drawn, revealed, notice in play.notices:
        if not revealed:
            assert set(card_strings(notice.message)) <= set(public_draws[: len(drawn)])
    for hidden, view in play.views:
        if hidden:
            assert set(card_strings(view)) <= set(public_draws)
