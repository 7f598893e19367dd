"""Seat mode: who sits at each seat, who bets behind it, and what a bet behind may be.

In common draw (no ``Seating``) every station plays every box it bets on. In seat mode
(seeds 003 and 004: a traditional table) each seat is a box with one seated station, the
only one that decides for it; any other station's bet on that box is a bet *behind* the
seat: it shares the seat's cards and follows the seat's decisions (rounds/engine/round.py).
A station that ``follows`` also doubles and splits with the seat when its credits cover the
extra stake; otherwise its bet stays on the first hand as it was.

A bet behind needs the seat's own main bet (there is no hand to follow without one), may be
a special bet only where ``behind_special_bets`` lists its code (the jurisdiction's
choice), and every stake behind one seat together stays within ``behind_cap``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .errors import EngineError
from .money import fmt
from .specials import PlacedBet

MAX_SEATS = 7  # a traditional table (seed 004's layout has 6 spots; 7 is the usual most)


@dataclass(frozen=True)
class Seating:
    seats: Mapping[int, str]  # seat (box) -> the station seated there
    follow: frozenset[str] = field(default_factory=frozenset)  # follow doubles and splits
    behind_cap: Decimal | None = None  # every stake behind one seat, together
    behind_special_bets: frozenset[str] = field(default_factory=frozenset)

    def owner(self, box: int) -> str | None:
        return self.seats.get(box)

    def is_behind(self, station: str, box: int) -> bool:
        """Whether a bet of ``station`` on ``box`` is a bet behind the seat."""
        return self.seats.get(box) not in (None, station)

    def check(
        self, bets: Iterable[PlacedBet], *, placing: bool = False, others: Iterable[PlacedBet] = ()
    ) -> None:
        """Refuse bets that seat mode does not allow (EngineError naming station and box):
        at the close of bets, every bet of the round; ``placing``, one station's bets as it
        places them, with ``others``, the other stations' bets on those seats, which count
        towards the cap behind a seat only (a seat's own main bet may still come)."""
        bets = list(bets)
        seat_bets = {
            b.box for b in bets if b.code == "main" and not self.is_behind(b.station, b.box)
        }
        behind: defaultdict[int, Decimal] = defaultdict(Decimal)
        placer = bets[0].station if placing and bets else None
        for bet in bets:
            if bet.box not in self.seats:
                raise EngineError(
                    f"seat {bet.box} is empty: nobody sits there",
                    bet.station,
                    bet.box,
                    code="empty_seat",
                )
            if not self.is_behind(bet.station, bet.box):
                continue
            if bet.code != "main" and bet.code not in self.behind_special_bets:
                raise EngineError(
                    f"{bet.code} may not be bet behind a seat here",
                    bet.station,
                    bet.box,
                    code="not_allowed_behind",
                )
            if bet.box not in seat_bets and not placing:
                raise EngineError(
                    f"seat {bet.box} has no main bet to bet behind",
                    bet.station,
                    bet.box,
                    code="no_seat_bet",
                )
            behind[bet.box] += bet.stake
        if self.behind_cap is None:
            return
        for other in others:
            if other.box in behind and self.is_behind(other.station, other.box):
                behind[other.box] += other.stake
        for box, total in sorted(behind.items()):
            if total > self.behind_cap:
                come = "would come" if placing else "come"
                raise EngineError(
                    f"the stakes behind seat {box} {come} to {fmt(total)}, above the cap "
                    f"{fmt(self.behind_cap)}",
                    placer,  # at the close, every station behind that seat
                    box,
                    code="behind_cap",
                )

    def as_data(self) -> dict[str, Any]:
        """The seating as the round's ``bets_closed`` record keeps it (``from_data`` reads it)."""
        data: dict[str, Any] = {
            "seats": {str(box): station for box, station in sorted(self.seats.items())},
            "follow": sorted(self.follow),
            "behind_special_bets": sorted(self.behind_special_bets),
        }
        if self.behind_cap is not None:
            data["behind_cap"] = str(self.behind_cap)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Seating:
        cap = data.get("behind_cap")
        return cls(
            seats={int(box): station for box, station in data["seats"].items()},
            follow=frozenset(data.get("follow", ())),
            behind_cap=None if cap is None else Decimal(cap),
            behind_special_bets=frozenset(data.get("behind_special_bets", ())),
        )
