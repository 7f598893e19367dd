"""One common-draw blackjack round, driven by events.

The round starts with its bets closed and stakes taken. From then on it moves
only through events: a card drawn from the shoe (``CardDrawn``), a burned
card (``Burn``), a station's answer (``Decision``) and an expired timer
(``Timeout``). ``Round.apply`` validates an event completely before it
changes anything, so a refused event (an ``EngineError``) leaves the round as
it was, and returns the notices the event produced: what the table (public)
and each station (private) may now see. The hole card is never in a notice or
a view for a station before the dealer reveals it.

Common draw: every station with a bet on a box holds its own copy of the
box's hands. In each player step every station answers for its hands in box
order until it asks for a card or has finished them all; the next shoe card
then goes to every hand that asked for one (spec/scenario-format.md, item 6).

Seat mode (``seating``, rounds/engine/seating.py): each seat is a box with one seated
station. The deal is the same two passes; then the seats play one at a time, seat 1 (the
dealer's left) first, one question a step, and a card asked for goes to that hand at once.
The hands behind a seat copy its cards and follow its decisions (``_follow``); insurance,
even money and a bonus pick stay each station's own. ``SeatLeft`` records a seated player
who left mid-round: the caller answers that seat's questions by the abandoned-hands rule.

Special bets are settled through what the caller offers (``paytables``, rounds/engine/
specials.py): each offered bet's paytable carries its evaluator, so this package knows no
bet code and imports nothing from payouts/specials.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any

from .cards import Card
from .errors import EngineError
from .hands import hand_total, is_two_card_21
from .money import ZERO, cents, fmt
from .rules import RuleSet
from .seating import Seating
from .specials import NO_SPECIAL_BETS, Multipliers, SettleAt, SpecialBets, SpecialLimits


class Phase(StrEnum):
    DEAL = "deal"
    BONUS = "bonus"  # In For 6 hard sixes: stations pick behind which multiplier
    INSURANCE = "insurance"
    PLAY = "play"
    DEALER = "dealer"
    SETTLED = "settled"


class Action(StrEnum):
    HIT = "hit"
    STAND = "stand"
    DOUBLE = "double"
    DOUBLE_HALF = "double_half"
    SPLIT = "split"
    SURRENDER = "surrender"
    INSURE = "insure"
    NO_INSURANCE = "no_insurance"
    EVEN_MONEY = "even_money"
    NO_EVEN_MONEY = "no_even_money"
    PICK_1 = "pick_1"
    PICK_2 = "pick_2"
    PICK_3 = "pick_3"


PLAY_ACTIONS = (
    Action.HIT,
    Action.STAND,
    Action.DOUBLE,
    Action.DOUBLE_HALF,
    Action.SPLIT,
    Action.SURRENDER,
)
INSURANCE_ACTIONS = (Action.INSURE, Action.NO_INSURANCE)
EVEN_MONEY_ACTIONS = (Action.EVEN_MONEY, Action.NO_EVEN_MONEY)
PICK_ACTIONS = (Action.PICK_1, Action.PICK_2, Action.PICK_3)


# --- events -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Burn:
    card: Card


@dataclass(frozen=True, slots=True)
class CardDrawn:
    card: Card


@dataclass(frozen=True, slots=True)
class Decision:
    station: str
    action: str
    hand: str | None = None  # when given, must be the hand the station is asked about
    # Made for an abandoned hand by the table's default strategy (the jurisdiction's
    # abandoned-hands rule), not by the player: recall shows it as automatic.
    automatic: bool = False


@dataclass(frozen=True, slots=True)
class BonusAssigned:
    """The In For 6 multipliers behind pick_1, pick_2 and pick_3 of one station's box.

    Made by the server's secure RNG (payouts/specials/bonus.py) before the pick and
    kept in the round's event log, so that the round replays to the same result."""

    station: str
    box: int
    multipliers: Multipliers


@dataclass(frozen=True, slots=True)
class Timeout:
    station: str | None = None  # None: every station still asked in this step


@dataclass(frozen=True, slots=True)
class SeatLeft:
    """Seat mode: the seated player left mid-round. The seat's questions are answered from
    now on by the table's abandoned-hands rule (the caller's), at once, and those behind
    follow those answers."""

    station: str


Event = Burn | CardDrawn | Decision | Timeout | BonusAssigned | SeatLeft


@dataclass(frozen=True, slots=True)
class Notice:
    """A message for ``to``: "public" (every station and the croupier) or a station id."""

    to: str
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Bet:
    station: str
    box: int
    code: str
    stake: Decimal


# --- state --------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class SpecialBet:
    station: str
    box: int
    code: str
    stake: Decimal
    combination: str | None = None
    returned: Decimal = ZERO
    settled: bool = False
    multipliers: tuple[Decimal, ...] | None = None  # In For 6: behind pick_1 .. pick_3
    pick: int | None = None

    def outcome(self) -> dict[str, Any]:
        return {
            "box": self.box,
            "bet": self.code,
            "stake": fmt(self.stake),
            "combination": self.combination,
            "returned": fmt(self.returned),
        }


@dataclass(slots=True, eq=False)
class Hand:
    id: str
    station: str
    box: int
    main_stake: Decimal
    stake: Decimal
    cards: list[Card] = field(default_factory=list)
    split: bool = False  # belongs to a split box: no blackjack, split rules apply
    from_split: bool = False  # made by a split (OBO gives it back whole)
    split_aces: bool = False
    doubled: bool = False
    surrendered: bool = False
    even_money: bool = False
    charlie: bool = False
    finished: bool = False
    insurance: Decimal | None = None
    insurance_returned: Decimal = ZERO
    result: str | None = None
    returned: Decimal = ZERO
    follows: Hand | None = None  # seat mode: the seat's hand this bet behind follows

    @property
    def total(self) -> int:
        return hand_total(self.cards)[0]

    @property
    def blackjack(self) -> bool:
        return not self.split and is_two_card_21(self.cards)

    @property
    def bust(self) -> bool:
        return self.total > 21

    @property
    def live(self) -> bool:
        """Still needs the dealer's hand to be decided."""
        return not (
            self.bust or self.blackjack or self.surrendered or self.even_money or self.charlie
        )

    def view(self) -> dict[str, Any]:
        total, soft = hand_total(self.cards)
        return {
            "id": self.id,
            "box": self.box,
            "cards": [str(c) for c in self.cards],
            "total": total,
            "soft": soft,
            "stake": fmt(self.stake),
            "finished": self.finished,
            "result": self.result,
            "returned": fmt(self.returned) if self.result is not None else None,
        }


@dataclass(slots=True, eq=False)
class Seat:
    """A station's part in the round: its hands in play order and its credits."""

    station: str
    credits: Decimal
    hands: list[Hand] = field(default_factory=list)
    splits: Counter[int] = field(default_factory=Counter)
    questions: list[Hand] = field(default_factory=list)  # insurance, box order
    prompt: Hand | None = None  # the hand this station is asked about now
    asking: Hand | None = None  # the hand that asked for this step's card
    hands_made: int = 0
    prompt_view: dict[str, Any] | None = None  # the open question, kept until the seat changes
    specials: list[SpecialBet] = field(default_factory=list)  # box order, then as placed
    bonus: list[SpecialBet] = field(default_factory=list)  # In For 6 picks still to make

    def new_hand_id(self, box: int) -> str:
        self.hands_made += 1
        return f"{self.station}/{box}/{self.hands_made}"


def _turn_of(hand: Hand) -> dict[str, Any]:
    """Seat mode: whose turn it is, as the public view and the step event say it."""
    return {"box": hand.box, "station": hand.station, "hand": hand.id}


def _double_stake(hand: Hand, action: Action) -> Decimal:
    """What a double adds to the hand: its stake, or half of it (rounded down) for less."""
    return hand.stake if action is Action.DOUBLE else cents(hand.stake / 2)


# --- the round ----------------------------------------------------------------------------


class Round:
    def __init__(
        self,
        rules: RuleSet,
        bets: list[Bet],
        credits: dict[str, Decimal],
        boxes: int = 3,
        paytables: SpecialBets | None = None,
        special_limits: SpecialLimits = None,
        seating: Seating | None = None,
    ) -> None:
        """Close bets: take every stake from the stations' credits.

        ``credits`` are each station's credits before the stakes; ``paytables``
        the special bets the table offers, by bet code, each paytable with its
        evaluator, and their placement rules (payouts.specials.Paytables; None: none
        offered); ``special_limits`` their [minimum, maximum], one pair for all or one
        per bet code; ``seating`` the seats of a seat-mode table (None: common draw).
        Refuses (and builds nothing) when a bet is malformed, breaks a
        placement rule or the credits do not cover it.
        """
        self.rules = rules
        self.boxes = boxes
        self.paytables: SpecialBets = NO_SPECIAL_BETS if paytables is None else paytables
        self.seats: dict[str, Seat] = {}
        self.bets = list(bets)
        self.starting_credits = dict(credits)
        self.seating = seating
        self.left: set[str] = set()  # seat mode: seated players who left mid-round
        self._validate_bets(bets, credits)
        if seating is not None:
            seating.check(bets)
        if any(b.code != "main" for b in bets):
            self.paytables.check_placement(bets, rules.special_without_main, special_limits)

        for station, amount in credits.items():
            self.seats[station] = Seat(station, amount)
        self._bets_of: dict[str, list[Bet]] = {station: [] for station in self.seats}
        for bet in bets:
            self._bets_of[bet.station].append(bet)
            seat = self.seats[bet.station]
            seat.credits -= bet.stake
            if bet.code == "main":
                hand = Hand(seat.new_hand_id(bet.box), bet.station, bet.box, bet.stake, bet.stake)
                seat.hands.append(hand)
            else:
                seat.specials.append(SpecialBet(bet.station, bet.box, bet.code, bet.stake))
        self._due: dict[SettleAt, list[SpecialBet]] = {}  # special bets by when they settle
        for seat in self.seats.values():
            seat.hands.sort(key=lambda h: h.box)
            seat.specials.sort(key=lambda b: b.box)
            for special in seat.specials:
                when = self.paytables[special.code].settle_at
                self._due.setdefault(when, []).append(special)

        self.boxes_in_play = sorted({bet.box for bet in bets})
        if not self.boxes_in_play:
            raise EngineError("no bets on the table", code="no_bets")
        self._box_hands: dict[int, list[Hand]] = {b: [] for b in self.boxes_in_play}
        for seat in self.seats.values():
            for hand in seat.hands:
                self._box_hands[hand.box].append(hand)
        self.box_cards: dict[int, list[Card]] = {b: [] for b in self.boxes_in_play}
        # Seat mode: each seat hand's hands behind, which copy its cards and follow its play.
        self._followers: dict[Hand, list[Hand]] = {}
        if seating is not None:
            self._link_bets_behind(seating)

        self._deal_plan: list[str] = [f"box:{b}" for b in self.boxes_in_play] + ["dealer_up"]
        self._deal_plan += [f"box:{b}" for b in self.boxes_in_play]
        if rules.hole_card:
            self._deal_plan.append("hole")
        self._card_for: str | None = self._deal_plan[0]
        self._dealt = 0

        self.phase = Phase.DEAL
        self.step = 0
        self.burned: list[Card] = []
        self.dealer: list[Card] = []
        self.hole_revealed = False
        self.dealer_blackjack: bool | None = None
        self.drawn: list[Card] = []  # every card taken from the shoe, burns included, in order
        self._copies: Counter[Card] = Counter()
        self._pending: set[str] = set()  # stations with an open question
        self.events: list[Event] = []
        self._notices: list[Notice] = []

    # -- public queries ---------------------------------------------------------------------

    @property
    def awaiting_card(self) -> str | None:
        """What the next shoe card is for: "box:N", "dealer_up", "hole", "hands", "dealer"."""
        return self._card_for

    @property
    def prompted_stations(self) -> list[str]:
        """Stations that must answer before the table can go on, in seat order."""
        return [s for s in self.seats if s in self._pending]

    @property
    def awaits_answers(self) -> bool:
        """Whether any station must answer before the table can go on (asked after every
        decision of a burst: not the list, which is as long as the table)."""
        return bool(self._pending)

    def waits_only_for(self, station: str) -> bool:
        """Whether ``station`` is the one station the table still waits for: its answer may
        close the step (and go on to the next step, the dealer's turn, the settlement)."""
        return len(self._pending) == 1 and station in self._pending

    @property
    def awaiting_bonus(self) -> list[tuple[str, int, Multipliers]]:
        """In For 6 hard sixes that need their multipliers assigned: (station, box, multipliers)."""
        if self.phase is not Phase.BONUS:
            return []
        return [
            (b.station, b.box, self._listed_multipliers(b))
            for seat in self.seats.values()
            for b in seat.bonus
            if b.multipliers is None
        ]

    def _listed_multipliers(self, bet: SpecialBet) -> Multipliers:
        """The multipliers the paytable lists for a bet waiting in a seat's bonus game."""
        # Only a bet paid for one of its bonus combinations waits there (_settle_specials).
        assert bet.combination is not None
        listed = self.paytables[bet.code][bet.combination]
        # parse_paytable makes every bonus combination's pays three multipliers.
        assert isinstance(listed, tuple)
        return listed

    def asking_hands(self) -> list[tuple[str, int]]:
        """(station, box) of every hand waiting for this step's card."""
        return [(s.station, s.asking.box) for s in self.seats.values() if s.asking is not None]

    @property
    def settled(self) -> bool:
        return self.phase is Phase.SETTLED

    def prompt_for(self, station: str) -> dict[str, Any] | None:
        """The question a station is asked now, with the answers allowed (the live buttons)."""
        seat = self._seat(station)
        if station not in self._pending:
            return None
        if seat.prompt_view is None:
            seat.prompt_view = self._question(seat)
        return seat.prompt_view

    def _question(self, seat: Seat) -> dict[str, Any]:
        hand: Hand | None
        choices: tuple[Action, ...]
        if self.phase is Phase.BONUS:
            bet = seat.bonus[0]
            allowed = [a.value for a in PICK_ACTIONS]
            return {"kind": "bonus_pick", "bet": bet.code, "box": bet.box, "allowed": allowed}
        if self.phase is Phase.INSURANCE:
            hand = seat.questions[0]
            kind = "even_money" if self._offers_even_money(hand) else "insurance"
            choices = EVEN_MONEY_ACTIONS if kind == "even_money" else INSURANCE_ACTIONS
        else:
            hand = seat.prompt
            assert hand is not None
            kind = "decision"
            choices = PLAY_ACTIONS
        allowed = [a.value for a in choices if self._refusal(seat, hand, a) is None]
        return {"kind": kind, "hand": hand.id, "box": hand.box, "allowed": allowed}

    def croupier_prompt(self) -> str:
        """The dealer's next physical action, as the croupier tablet says it."""
        target = self._card_for
        if self.phase is Phase.SETTLED:
            return "pay and clear"
        if target is None:
            return "wait for the stations"
        if target.startswith("box:"):
            return f"deal box {target[4:]}"
        if target == "dealer" and self.rules.hole_card and len(self.dealer) == 2:
            return "reveal hole card, dealer draws"  # the dealer turns it over first
        return {
            "dealer_up": "deal the dealer's up card",
            "hole": "deal the hole card",
            "hands": "draw a card",
            "dealer": "dealer draws",
        }[target]

    def visible_dealer_cards(self) -> list[str]:
        if self.rules.hole_card and not self.hole_revealed:
            return [str(c) for c in self.dealer[:1]]
        return [str(c) for c in self.dealer]

    def public_view(self) -> dict[str, Any]:
        """What every station and the croupier may see: never the hole card before it is shown."""
        dealer: dict[str, Any] = {"cards": self.visible_dealer_cards()}
        if self.rules.hole_card and len(self.dealer) >= 2 and not self.hole_revealed:
            dealer["hole_card"] = "face_down"
        if self.phase is Phase.SETTLED:
            total, _ = hand_total(self.dealer)
            dealer |= {"total": total, "blackjack": bool(self.dealer_blackjack)}
        return {
            "phase": self.phase.value,
            "step": self.step,
            "dealer": dealer,
            "boxes": {str(b): [str(c) for c in cards] for b, cards in self.box_cards.items()},
            "burned": [str(c) for c in self.burned],
            "awaiting": self.croupier_prompt(),
            "stations_asked": len(self._pending),
            "stations_done": len(self.seats) - len(self._pending),
        } | self._seat_view()

    def _seat_view(self) -> dict[str, Any]:
        """Seat mode's part of the public view: who sits where, whose turn it is."""
        if self.seating is None:
            return {}
        return {
            "mode": "seat",
            "seats": {str(box): s for box, s in sorted(self.seating.seats.items())},
            "turn": self.turn(),
            "left": sorted(self.left),
        }

    def turn(self) -> dict[str, Any] | None:
        """Seat mode: the seat whose question is open or whose hand waits for its card."""
        if self.seating is None or self.phase is not Phase.PLAY:
            return None
        hand = self._turn_hand()
        return None if hand is None else _turn_of(hand)

    def station_view(self, station: str) -> dict[str, Any]:
        """The public view plus the station's own hands, credits and question."""
        return self.public_view() | {"station": self.own_view(station)}

    def own_view(self, station: str) -> dict[str, Any]:
        """The station's own part of its view (``station_view``): its hands, credits and
        question. A batch's replies join it to one public view made for them all."""
        seat = self._seat(station)
        return {
            "id": station,
            "credits": fmt(seat.credits),
            "hands": [h.view() for h in seat.hands],
            "prompt": self.prompt_for(station),
        }

    # -- events -----------------------------------------------------------------------------

    def apply(self, event: Event) -> list[Notice]:
        """Apply one event and return what each party may now see.

        Raises EngineError, having changed nothing, when the event is refused.
        """
        if self.phase is Phase.SETTLED:
            raise EngineError("the round is over", code="round_over")
        wanted_before = self._card_for
        if isinstance(event, CardDrawn):
            self._check_card(event.card)
            self._on_card(event.card)
        elif isinstance(event, Burn):
            self._on_burn(event.card)
        elif isinstance(event, Decision):
            self._on_decision(event)
        elif isinstance(event, Timeout):
            self._on_timeout(event.station)
        elif isinstance(event, BonusAssigned):
            self._on_bonus_assigned(event)
        elif isinstance(event, SeatLeft):
            self._on_seat_left(event.station)
        else:  # pragma: no cover - type guard
            raise EngineError(f"unknown event {event!r}")
        self.events.append(event)
        if self._card_for is not None and (
            isinstance(event, CardDrawn) or self._card_for != wanted_before
        ):
            self._notices.append(self.dealer_prompt())  # the shoe's next card is wanted
        notices, self._notices = self._notices, []
        return notices

    def dealer_prompt(self) -> Notice:
        """The dealer's next physical action, for the croupier tablet and the card reader."""
        return Notice(
            "public",
            {"type": "dealer", "prompt": self.croupier_prompt(), "card_for": self._card_for},
        )

    # -- validation -------------------------------------------------------------------------

    def _validate_bets(self, bets: list[Bet], credits: dict[str, Decimal]) -> None:
        seen: set[tuple[str, int, str]] = set()
        staked: defaultdict[str, Decimal] = defaultdict(Decimal)
        for bet in bets:
            if bet.station not in credits:
                raise EngineError("station has no credits", bet.station, bet.box)
            if not 1 <= bet.box <= self.boxes:
                raise EngineError(f"the table has boxes 1 to {self.boxes}", bet.station, bet.box)
            if bet.stake <= 0:
                raise EngineError("a stake must be more than 0.00", bet.station, bet.box)
            key = (bet.station, bet.box, bet.code)
            if key in seen:
                raise EngineError(f"two {bet.code} bets on one box", bet.station, bet.box)
            seen.add(key)
            staked[bet.station] += bet.stake
        for station, total in staked.items():
            if total > credits[station]:
                raise EngineError(
                    f"credits {fmt(credits[station])} do not cover the stakes {fmt(total)}",
                    station,
                    code="insufficient_credits",
                )

    def _check_card(self, card: Card) -> None:
        if self._card_for is None:
            raise EngineError(
                f"no card is wanted now ({self.croupier_prompt()})", code="card_not_expected"
            )
        self._check_copies(card)

    def _check_copies(self, card: Card) -> None:
        if self._copies[card] + 1 > self.rules.decks:
            raise EngineError(
                f"{card} drawn {self._copies[card] + 1} times, but a {self.rules.decks}-deck "
                f"shoe holds {self.rules.decks}",
                code="impossible_card",
            )

    def _seat(self, station: str) -> Seat:
        seat = self.seats.get(station)
        if seat is None:
            raise EngineError("not at this table", station, code="unknown_station")
        return seat

    def _offers_even_money(self, hand: Hand) -> bool:
        return self.rules.even_money and hand.blackjack

    def _refusal(self, seat: Seat, hand: Hand, action: Action) -> str | None:
        """Why ``action`` is not allowed on ``hand`` now, or None when it is."""
        r = self.rules
        if action in INSURANCE_ACTIONS or action in EVEN_MONEY_ACTIONS:
            even = self._offers_even_money(hand)
            if even and action in INSURANCE_ACTIONS:
                return f"{action} is not allowed now: even_money or no_even_money expected"
            if not even and action in EVEN_MONEY_ACTIONS:
                return f"{action} is not allowed now: insure or no_insurance expected"
            if action is Action.INSURE:
                cost = cents(hand.main_stake / 2)
                if cost > seat.credits:
                    return (
                        f"credits {fmt(seat.credits)} do not cover the insurance stake {fmt(cost)}"
                    )
            return None
        n = len(hand.cards)
        one_card_split_ace = hand.split_aces and not r.hit_split_aces
        if action is Action.STAND:
            return None
        if action is Action.HIT:
            if one_card_split_ace:
                return "split aces take one card each and may not be hit"
            return None
        if action in (Action.DOUBLE, Action.DOUBLE_HALF):
            if action is Action.DOUBLE_HALF and not r.double_for_less:
                return "double_half is not allowed: the table has no double for less"
            if one_card_split_ace:
                return "split aces may not be doubled"
            if n != 2 and not r.double_after_hit:
                return f"double is not allowed on a {n}-card hand"
            if hand.split and not r.double_after_split:
                return "double after split is not allowed"
            total, soft = hand_total(hand.cards)
            if r.double_on != "any":
                low = 9 if r.double_on == "9-11" else 10
                if soft or not low <= total <= 11:
                    totals = "9, 10 or 11" if low == 9 else "10 or 11"
                    return f"double is allowed only on a hard {totals}"
            extra = _double_stake(hand, action)
            if extra <= 0:
                return "the stake is too small to double for less"
            if extra > seat.credits:
                return f"credits {fmt(seat.credits)} do not cover the double stake {fmt(extra)}"
            return None
        if action is Action.SPLIT:
            if r.max_splits == 0:
                return "splitting is not allowed at this table"
            if n != 2:
                return f"split is not allowed on a {n}-card hand"
            first, second = hand.cards
            if first.points != second.points:
                return "split needs two cards of the same value"
            if first.rank != second.rank and not r.split_unlike_tens:
                return "split needs two cards of the same rank (unlike tens may not be split)"
            if seat.splits[hand.box] >= r.max_splits:
                return f"no more splits on this box (at most {r.max_splits})"
            if first.is_ace and hand.split and not r.resplit_aces:
                return "split aces may not be split again"
            if hand.stake > seat.credits:
                return f"credits {fmt(seat.credits)} do not cover the split stake {fmt(hand.stake)}"
            return None
        if action is Action.SURRENDER:
            if one_card_split_ace:
                return "split aces may only be split again or stand"
            if not r.late_surrender:
                return "surrender is not allowed at this table"
            if n != 2:
                return f"surrender is not allowed on a {n}-card hand"
            if hand.split and not r.surrender_after_split:
                return "surrender after split is not allowed"
            return None
        return f"{action} is not a decision"  # pragma: no cover

    # -- cards --------------------------------------------------------------------------------

    def _on_burn(self, card: Card) -> None:
        if self.phase is not Phase.DEAL or len(self.drawn) > len(self.burned):
            raise EngineError("a card can only be burned before the deal", code="card_not_expected")
        self._check_copies(card)
        self._take(card)
        self.burned.append(card)
        self._public({"type": "burn", "card": str(card)})

    def _take(self, card: Card) -> None:
        self._copies[card] += 1
        self.drawn.append(card)

    def _on_card(self, card: Card) -> None:
        target = self._card_for
        self._take(card)
        if self.phase is Phase.DEAL:
            self._deal_card(target, card)
        elif self.phase is Phase.PLAY:
            self._draw_for_hands(card)
        elif self.phase is Phase.DEALER:
            self.dealer.append(card)
            self._public({"type": "card", "card": str(card), "to": "dealer"})
            self._dealer_continue()

    def _deal_card(self, target: str | None, card: Card) -> None:
        assert target is not None
        if target.startswith("box:"):
            box = int(target[4:])
            self.box_cards[box].append(card)
            for hand in self._box_hands[box]:
                hand.cards.append(card)
            self._public({"type": "card", "card": str(card), "to": "box", "box": box})
        elif target == "dealer_up":
            self.dealer.append(card)
            self._public({"type": "card", "card": str(card), "to": "dealer_up"})
        else:  # the hole card: stored, announced face down
            self.dealer.append(card)
            self._public({"type": "hole_card_dealt"})
        self._dealt += 1
        if self._dealt < len(self._deal_plan):
            self._card_for = self._deal_plan[self._dealt]
            return
        self._card_for = None
        self._after_deal()

    def _after_deal(self) -> None:
        for seat in self.seats.values():
            for hand in seat.hands:
                if hand.blackjack:
                    hand.finished = True
            self._private(seat.station, {"type": "hands", "hands": [h.view() for h in seat.hands]})
        self._settle_specials(SettleAt.DEAL)
        if any(seat.bonus for seat in self.seats.values()):
            self.phase = Phase.BONUS  # wait for the secure assignment of each hard six
            self._public({"type": "phase", "phase": self.phase.value})
            return
        self._offer_insurance()

    def _offer_insurance(self) -> None:
        if self.dealer[0].is_ace and self.rules.insurance:
            self.phase = Phase.INSURANCE
            for seat in self.seats.values():
                seat.questions = list(seat.hands)
                if seat.questions:
                    self._pending.add(seat.station)
            self._public({"type": "phase", "phase": self.phase.value})
            self._send_prompts()
            if not self._pending:
                self._peek()
        else:
            self._peek()

    def _peek(self) -> None:
        up = self.dealer[0]
        if self.rules.hole_card:
            if not (up.is_ace or up.is_ten_value):
                self.dealer_blackjack = False
            elif self.rules.peek:
                self.dealer_blackjack = is_two_card_21(self.dealer)
                self._public({"type": "peek", "dealer_blackjack": self.dealer_blackjack})
                if self.dealer_blackjack:
                    self._reveal_hole()
                    self._settle()
                    return
        self.phase = Phase.PLAY
        self._public({"type": "phase", "phase": self.phase.value})
        self._open_step()

    def _reveal_hole(self) -> None:
        self.hole_revealed = True
        self._public({"type": "hole_card", "card": str(self.dealer[1])})

    def _draw_for_hands(self, card: Card) -> None:
        receivers: list[Hand] = []
        for seat in self.seats.values():
            hand = seat.asking
            if hand is None:
                continue
            seat.asking = None
            hand.cards.append(card)
            self._after_card(seat, hand)
            receivers.append(hand)
            self._private(seat.station, {"type": "hand", "hand": hand.view()})
            self._mirror(hand)
        self._public(
            {
                "type": "card",
                "card": str(card),
                "to": "hands",
                "boxes": sorted({h.box for h in receivers}),
            }
        )
        self._open_step()

    def _after_card(self, seat: Seat, hand: Hand) -> None:
        r = self.rules
        total, soft = hand_total(hand.cards)
        if total > 21:
            hand.finished = True
        elif r.charlie is not None and len(hand.cards) >= r.charlie:
            hand.charlie = True
            hand.finished = True
        elif hand.doubled:
            hand.finished = True
        elif total == 21 and (r.auto_stand == "21" or not soft):
            hand.finished = True
        elif hand.split_aces and not r.hit_split_aces:
            # One card each, unless an ace drew an ace and the box may still be split.
            may_resplit = (
                hand.cards[-1].is_ace and r.resplit_aces and seat.splits[hand.box] < r.max_splits
            )
            hand.finished = not may_resplit

    # -- player steps -------------------------------------------------------------------------

    def _open_step(self) -> None:
        self.step += 1
        self._card_for = None
        if self.seating is not None:
            self._open_seat_step()
            return
        for seat in self.seats.values():
            self._advance(seat)
        self._public({"type": "step", "step": self.step, "stations_asked": len(self._pending)})
        self._send_prompts()
        self._close_step_if_done()

    def _advance(self, seat: Seat) -> None:
        """Find the station's next question in this step, or the hand that asks for a card."""
        seat.prompt = None
        seat.prompt_view = None
        for hand in seat.hands:
            if hand.finished:
                continue
            if len(hand.cards) == 1:  # a split hand asks for its second card without a question
                seat.asking = hand
            else:
                seat.prompt = hand
            break
        if seat.prompt is None:
            self._pending.discard(seat.station)
        else:
            self._pending.add(seat.station)

    def _close_step_if_done(self) -> None:
        if self._pending or self._card_for is not None:
            return
        if self.phase not in (Phase.BONUS, Phase.INSURANCE, Phase.PLAY):
            return
        if self.phase is Phase.BONUS:
            if not self.awaiting_bonus:
                self._offer_insurance()
        elif self.phase is Phase.INSURANCE:
            self._peek()
        elif any(seat.asking is not None for seat in self.seats.values()):
            self._card_for = "hands"
        else:
            self._card_for = None
            self._dealer_turn()

    def _send_prompts(self) -> None:
        for station in self.prompted_stations:
            self._private(station, {"type": "prompt", "prompt": self.prompt_for(station)})

    # -- decisions ----------------------------------------------------------------------------

    def _on_decision(self, event: Decision) -> None:
        seat = self._seat(event.station)
        if event.station not in self._pending:
            raise EngineError(
                f"{event.action} is not allowed now: no question is open for this station",
                event.station,
                code="not_your_turn",
            )
        if self.phase is Phase.BONUS:
            self._pick(seat, event.action)
            self._close_step_if_done()
            return
        hand = seat.questions[0] if self.phase is Phase.INSURANCE else seat.prompt
        assert hand is not None
        try:
            action = Action(event.action)
        except ValueError:
            raise EngineError(
                f"unknown action {event.action!r}", event.station, hand.box, code="unknown_action"
            ) from None
        if event.hand is not None and event.hand != hand.id:
            raise EngineError(
                f"{action} is for hand {event.hand}, but the question is about hand {hand.id}",
                event.station,
                hand.box,
                code="wrong_hand",
            )
        if action in PICK_ACTIONS:
            raise EngineError(
                f"{action} is not allowed now: no bonus game is open",
                event.station,
                hand.box,
                code="not_allowed",
            )
        if self.phase is Phase.PLAY and action not in PLAY_ACTIONS:
            raise EngineError(
                f"{action} is not allowed now: a decision (hit, stand, ...) is expected",
                event.station,
                hand.box,
                code="not_allowed",
            )
        if self.phase is Phase.INSURANCE and action in PLAY_ACTIONS:
            expected = (
                "even_money or no_even_money"
                if self._offers_even_money(hand)
                else "insure or no_insurance"
            )
            raise EngineError(
                f"{action} is not allowed now: {expected} expected",
                event.station,
                hand.box,
                code="not_allowed",
            )
        refusal = self._refusal(seat, hand, action)
        if refusal is not None:
            code = "insufficient_credits" if refusal.startswith("credits ") else "not_allowed"
            raise EngineError(refusal, event.station, hand.box, code=code)
        if self.phase is Phase.INSURANCE:
            self._answer_insurance(seat, hand, action)
        else:
            self._play(seat, hand, action)
            changed: dict[str, Any] = {"type": "hand", "hand": hand.view()}
            if event.automatic:  # the station shows the play as made for it
                changed["automatic"] = action.value
            self._private(seat.station, changed)
            self._after_play(seat, hand, action)
        self._close_step_if_done()

    def _answer_insurance(self, seat: Seat, hand: Hand, action: Action) -> None:
        seat.prompt_view = None
        if action is Action.INSURE:
            hand.insurance = cents(hand.main_stake / 2)
            seat.credits -= hand.insurance
        elif action is Action.EVEN_MONEY:
            hand.even_money = True
            hand.finished = True
            hand.result = "even_money"
            hand.returned = hand.stake * 2
            seat.credits += hand.returned  # even money is paid at once
        seat.questions.pop(0)
        if seat.questions:
            self._private(seat.station, {"type": "prompt", "prompt": self.prompt_for(seat.station)})
        else:
            self._pending.discard(seat.station)

    def _play(self, seat: Seat, hand: Hand, action: Action) -> None:
        seat.prompt_view = None
        if action is Action.STAND:
            hand.finished = True
        elif action is Action.HIT:
            seat.asking = hand
        elif action in (Action.DOUBLE, Action.DOUBLE_HALF):
            extra = _double_stake(hand, action)
            seat.credits -= extra
            hand.stake += extra
            hand.doubled = True
            seat.asking = hand
        elif action is Action.SURRENDER:
            hand.surrendered = True
            hand.finished = True
        elif action is Action.SPLIT:
            seat.credits -= hand.stake
            seat.splits[hand.box] += 1
            second = hand.cards.pop()
            aces = second.is_ace
            new = Hand(
                seat.new_hand_id(hand.box),
                seat.station,
                hand.box,
                hand.main_stake,
                hand.stake,
                cards=[second],
                split=True,
                from_split=True,
                split_aces=aces,
            )
            hand.split = True
            hand.split_aces = aces
            seat.hands.insert(seat.hands.index(hand) + 1, new)

    def _after_play(self, seat: Seat, hand: Hand, action: Action) -> None:
        """After a play decision: the station's next question (common draw), or, in seat
        mode, those behind follow and the next seat's question opens (or the card comes)."""
        if self.seating is None:
            self._advance_after_answer(seat)
            return
        self._follow(seat, hand, action)
        seat.prompt = None
        self._pending.discard(seat.station)
        if seat.asking is not None:
            self._card_for = "hands"
        else:
            self._open_step()

    def _advance_after_answer(self, seat: Seat) -> None:
        if seat.asking is not None:  # asked for a card: done for this step
            seat.prompt = None
            self._pending.discard(seat.station)
        else:
            self._advance(seat)
            if seat.prompt is not None:
                self._private(
                    seat.station, {"type": "prompt", "prompt": self.prompt_for(seat.station)}
                )

    def _on_timeout(self, station: str | None) -> None:
        """Give every open question (of one station, or all) its timeout default. Idempotent."""
        stations = self.prompted_stations if station is None else [station]
        for name in stations:
            seat = self._seat(name)
            hand: Hand | None
            while name in self._pending:
                if self.phase is Phase.BONUS:
                    self._pick(seat, Action.PICK_1.value)  # a pick made for the station
                elif self.phase is Phase.INSURANCE:
                    hand = seat.questions[0]
                    decline = (
                        Action.NO_EVEN_MONEY
                        if self._offers_even_money(hand)
                        else Action.NO_INSURANCE
                    )
                    self._answer_insurance(seat, hand, decline)
                else:
                    hand = seat.prompt
                    assert hand is not None
                    action = self._timeout_action(seat, hand)
                    self._play(seat, hand, action)
                    self._private(seat.station, {"type": "hand", "hand": hand.view()})
                    self._after_play(seat, hand, action)
                    if self.seating is not None:
                        break  # seat mode: the next question has a timer of its own
        self._close_step_if_done()

    def _timeout_action(self, seat: Seat, hand: Hand) -> Action:
        if (
            self.rules.timeout_action == "hit_soft"
            and self._refusal(seat, hand, Action.HIT) is None
        ):
            total, soft = hand_total(hand.cards)
            if total < (17 if soft else 12):
                return Action.HIT
        return Action.STAND

    # -- seat mode ----------------------------------------------------------------------------

    def _link_bets_behind(self, seating: Seating) -> None:
        """Each main bet behind a seat follows the seat's own main hand (Seating.check made
        sure there is one)."""
        seat_hand = {
            h.box: h
            for seat in self.seats.values()
            for h in seat.hands
            if not seating.is_behind(h.station, h.box)
        }
        for seat in self.seats.values():
            for hand in seat.hands:
                if seating.is_behind(hand.station, hand.box):
                    hand.follows = seat_hand[hand.box]
                    self._followers.setdefault(seat_hand[hand.box], []).append(hand)

    def _turn_hand(self) -> Hand | None:
        """The first seat hand still to play: seats in order from the dealer's left, a
        seat's hands in play order."""
        assert self.seating is not None
        for box in self.boxes_in_play:
            owner = self.seats.get(self.seating.seats[box])
            for hand in owner.hands if owner is not None else ():
                if hand.box == box and hand.follows is None and not hand.finished:
                    return hand
        return None

    def _open_seat_step(self) -> None:
        """Ask the seat whose turn it is about its hand: one question, one station."""
        for seat in self.seats.values():
            seat.prompt = None
            seat.prompt_view = None
        hand = self._turn_hand()
        if hand is None:
            self._dealer_turn()
            return
        seat = self.seats[hand.station]
        if len(hand.cards) == 1:  # a split hand takes its second card without a question
            seat.asking = hand
            self._card_for = "hands"
        else:
            seat.prompt = hand
            self._pending.add(seat.station)
        self._public(
            {
                "type": "step",
                "step": self.step,
                "stations_asked": len(self._pending),
                "turn": _turn_of(hand),
            }
        )
        self._send_prompts()

    def _follow(self, seat: Seat, hand: Hand, action: Action) -> None:
        """The hands behind ``hand`` follow the seat's decision. A double or a split is
        followed by a station that chose to follow, when its credits cover the extra
        stake; otherwise its bet stays on the first hand as it was."""
        assert self.seating is not None
        followers = list(self._followers.get(hand, ()))
        if action is Action.SPLIT:
            made = seat.hands[seat.hands.index(hand) + 1]  # _play put the new hand next
            self._followers[made] = []
        for behind in followers:
            other = self.seats[behind.station]
            follows = behind.station in self.seating.follow
            if action in (Action.DOUBLE, Action.DOUBLE_HALF):
                extra = _double_stake(behind, action)
                if follows and ZERO < extra <= other.credits:
                    other.credits -= extra
                    behind.stake += extra
                    behind.doubled = True
            elif action is Action.SPLIT and follows and behind.stake <= other.credits:
                other.credits -= behind.stake
                new = Hand(
                    other.new_hand_id(behind.box),
                    behind.station,
                    behind.box,
                    behind.main_stake,
                    behind.stake,
                    from_split=True,
                    follows=made,
                )
                other.hands.insert(other.hands.index(behind) + 1, new)
                self._followers[made].append(new)
        self._mirror(hand, action)
        if action is Action.SPLIT:
            self._mirror(made, action)

    def _mirror(self, hand: Hand, action: Action | None = None) -> None:
        """The hands behind a seat hand take its cards and its state, and are told."""
        for behind in self._followers.get(hand, ()):
            behind.cards = list(hand.cards)
            behind.split, behind.split_aces = hand.split, hand.split_aces
            behind.surrendered, behind.charlie = hand.surrendered, hand.charlie
            behind.finished = behind.even_money or hand.finished
            changed: dict[str, Any] = {"type": "hand", "hand": behind.view()}
            if action is not None:
                changed["seat_action"] = action.value
            self._private(behind.station, changed)

    def _on_seat_left(self, station: str) -> None:
        seating = self.seating
        if seating is None or station not in seating.seats.values():
            raise EngineError("only a seated player can leave a seat", station, code="not_seated")
        if station in self.left:
            raise EngineError("already left the seat", station, code="not_seated")
        self.left.add(station)
        for box in sorted(b for b, s in seating.seats.items() if s == station):
            self._public({"type": "seat_left", "box": box, "station": station})

    # -- special bets -------------------------------------------------------------------------

    def _settle_specials(self, at: SettleAt) -> None:
        """Settle every special bet due at this moment; returns are credited at once.

        Every station on a box shares its cards, so the paid combination is worked out
        once per box and bet code, not once per station."""
        due = self._due.pop(at, None)
        if not due:
            return
        up = self.dealer[0]
        second = self.dealer[1] if len(self.dealer) > 1 else None
        paid: dict[tuple[int, str], str | None] = {}
        told: dict[str, list[dict[str, Any]]] = {}
        for bet in due:
            offered = self.paytables[bet.code]
            key = (bet.box, bet.code)
            if key not in paid:
                p1, p2 = self.box_cards[bet.box][:2]
                paid[key] = offered.paid(p1, p2, up, second, self.dealer)
            seat = self.seats[bet.station]
            bet.combination = paid[key]
            if bet.combination in offered.bonus_combinations:
                seat.bonus.append(bet)  # paid when the station picks
                continue
            returned = "0.00"
            if bet.combination is not None:
                pays = offered[bet.combination]
                # Only a bonus combination lists multipliers, and those wait for the pick above.
                assert isinstance(pays, Decimal)
                bet.returned = offered.returned(bet.stake, pays)
                seat.credits += bet.returned
                returned = fmt(bet.returned)
            bet.settled = True
            # The station knows its stakes: tell it what each bet returned.
            told.setdefault(bet.station, []).append(
                {
                    "box": bet.box,
                    "bet": bet.code,
                    "combination": bet.combination,
                    "returned": returned,
                }
            )
        for station, bets in told.items():
            self._private(station, {"type": "specials", "bets": bets})

    def _on_bonus_assigned(self, event: BonusAssigned) -> None:
        if self.phase is not Phase.BONUS:
            raise EngineError("no bonus game is open", event.station, event.box, code="not_allowed")
        seat = self._seat(event.station)
        bet = next((b for b in seat.bonus if b.box == event.box and b.multipliers is None), None)
        if bet is None:
            raise EngineError(
                "no bonus game waits for multipliers here",
                event.station,
                event.box,
                code="not_allowed",
            )
        listed = self._listed_multipliers(bet)
        if sorted(event.multipliers) != sorted(listed):
            raise EngineError(
                f"the multipliers must be {', '.join(map(str, listed))} in some order",
                event.station,
                event.box,
                code="invalid",
            )
        bet.multipliers = tuple(event.multipliers)
        if not self.awaiting_bonus:  # every hard six is assigned: ask for the picks
            for s in self.seats.values():
                if s.bonus:
                    self._pending.add(s.station)
            self._send_prompts()

    def _pick(self, seat: Seat, action: str) -> None:
        bet = seat.bonus[0]
        if action not in {a.value for a in PICK_ACTIONS}:
            raise EngineError(
                f"{action} is not allowed now: pick_1, pick_2 or pick_3 expected",
                seat.station,
                bet.box,
                code="not_allowed",
            )
        assert bet.multipliers is not None
        bet.pick = int(action[-1])
        multiplier = bet.multipliers[bet.pick - 1]
        bet.returned = self.paytables[bet.code].returned(bet.stake, multiplier)
        bet.settled = True
        seat.credits += bet.returned
        seat.bonus.pop(0)
        seat.prompt_view = None
        self._private(
            seat.station,
            {
                "type": "bonus",
                **bet.outcome(),
                "pick": bet.pick,
                "multipliers": [str(m) for m in bet.multipliers],
            },
        )
        if seat.bonus:
            self._private(seat.station, {"type": "prompt", "prompt": self.prompt_for(seat.station)})
        else:
            self._pending.discard(seat.station)

    # -- dealer and settlement ----------------------------------------------------------------

    def _dealer_turn(self) -> None:
        self.phase = Phase.DEALER
        self._public({"type": "phase", "phase": self.phase.value})
        if self.rules.hole_card:
            self._reveal_hole()
            self._dealer_continue()
        else:
            self._card_for = "dealer"  # without a hole card the dealer always takes a second card

    def _dealer_continue(self) -> None:
        if len(self.dealer) < 2:
            self._card_for = "dealer"
            return
        if len(self.dealer) == 2 and is_two_card_21(self.dealer):
            self.dealer_blackjack = True
            self._card_for = None
            self._settle()
            return
        self.dealer_blackjack = False
        total, soft = hand_total(self.dealer)
        wants = total < 17 or (total == 17 and soft and self.rules.dealer_hits_soft_17)
        if wants and self._dealer_plays_on():
            self._card_for = "dealer"
        else:
            self._card_for = None
            self._settle()

    def _dealer_plays_on(self) -> bool:
        if self.rules.dealer_draws_to_end:
            return True
        if any(
            self.paytables[b.code].settle_at is SettleAt.DEALER_FINAL
            for seat in self.seats.values()
            for b in seat.specials
        ):
            return True  # a bet on the dealer's final hand (bust) needs the whole hand
        return any(hand.live for seat in self.seats.values() for hand in seat.hands)

    def _settle(self) -> None:
        self.phase = Phase.SETTLED
        self._card_for = None
        self._pending.clear()
        dealer_bj = bool(self.dealer_blackjack)
        dealer_total = hand_total(self.dealer)[0]
        self._settle_specials(SettleAt.DEALER_SECOND)
        self._settle_specials(SettleAt.DEALER_FINAL)
        for seat in self.seats.values():
            for hand in seat.hands:
                self._settle_hand(hand, dealer_bj, dealer_total)
                if hand.result != "even_money":  # even money was paid at once
                    seat.credits += hand.returned
                if hand.insurance is not None:
                    hand.insurance_returned = hand.insurance * 3 if dealer_bj else ZERO
                    seat.credits += hand.insurance_returned
            self._private(seat.station, self.settlement(seat.station))
        self._public({"type": "round_over", "dealer": self.dealer_outcome()})

    def _settle_hand(self, hand: Hand, dealer_bj: bool, dealer_total: int) -> None:
        stake = hand.stake
        if hand.even_money:
            result, returned = "even_money", hand.returned
        elif hand.bust:
            result, returned = "bust", ZERO
        elif dealer_bj:
            if hand.blackjack:
                result, returned = "push", stake
            elif self.rules.obo and not self.rules.hole_card:
                # Original bets only: a split-made hand gets all back, the first hand its double.
                if hand.from_split:
                    result, returned = "push", stake
                else:
                    result, returned = "lose", stake - hand.main_stake
            else:
                result, returned = "lose", ZERO
        elif hand.surrendered:
            result, returned = "surrender", cents(stake / 2)
        elif hand.blackjack:
            result, returned = "blackjack", cents(stake + stake * self.rules.blackjack_ratio)
        elif hand.charlie:
            result, returned = "charlie", stake * 2
        elif dealer_total > 21 or hand.total > dealer_total:
            result, returned = "win", stake * 2
        elif hand.total == dealer_total:
            result, returned = "push", stake
        else:
            result, returned = "lose", ZERO
        hand.result, hand.returned, hand.finished = result, returned, True

    def money_items(self, station: str) -> dict[str, Decimal]:
        """Every stake (negative) and return (positive) of a station so far, each under a key
        that names it uniquely within the round, so a ledger can write each exactly once."""
        seat = self._seat(station)
        items: dict[str, Decimal] = {}
        for bet in self._bets_of[station]:
            items[f"bet:{bet.box}:{bet.code}"] = -bet.stake
        for hand in seat.hands:
            if hand.from_split:
                items[f"{hand.id}:split"] = -hand.main_stake
            if hand.doubled:
                items[f"{hand.id}:double"] = hand.main_stake - hand.stake
            if hand.insurance is not None:
                items[f"{hand.id}:insurance"] = -hand.insurance
            if hand.result is not None and hand.returned:
                items[f"{hand.id}:return"] = hand.returned
            if hand.insurance_returned:
                items[f"{hand.id}:insurance_return"] = hand.insurance_returned
        for special in seat.specials:
            if special.settled and special.returned:
                items[f"special:{special.box}:{special.code}:return"] = special.returned
        return items

    def dealer_outcome(self) -> dict[str, Any]:
        total, _ = hand_total(self.dealer)
        return {
            "cards": [str(c) for c in self.dealer],
            "total": total,
            "blackjack": bool(self.dealer_blackjack),
            "bust": total > 21,
        }

    def settlement(self, station: str) -> dict[str, Any]:
        """A station's outcome in the scenario output's shape."""
        seat = self._seat(station)
        return {
            "type": "settlement",
            "credits": fmt(seat.credits),
            "hands": [
                {
                    "box": h.box,
                    "cards": [str(c) for c in h.cards],
                    "stake": fmt(h.stake),
                    "result": h.result,
                    "returned": fmt(h.returned),
                }
                for h in seat.hands
            ],
            "special": [b.outcome() for b in seat.specials],
            "insurance": [
                {"box": h.box, "stake": fmt(h.insurance), "returned": fmt(h.insurance_returned)}
                for h in seat.hands
                if h.insurance is not None
            ],
        }

    # -- notices ------------------------------------------------------------------------------

    def _public(self, message: dict[str, Any]) -> None:
        self._notices.append(Notice("public", message))

    def _private(self, station: str, message: dict[str, Any]) -> None:
        self._notices.append(Notice(station, message))
