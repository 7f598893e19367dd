"""Seat mode at the close of bets: the seating a round keeps, and the bets it cannot take.

Who sits where is live state (``stations.TableSeat``, changed by stations/seats.py between
rounds); a round takes a snapshot of it when its bets close, into its ``bets_closed``
record, so that a replay, a recall and a correction see the seats the round was played
with, whatever happened to the seats afterwards. The stations' checks refuse a bad bet when
it is placed; what may still be wrong at the close (a seat left, or its main bet taken off,
after others bet behind it) takes the station's bets off (``refusals``).
"""

from __future__ import annotations

from collections.abc import Sequence

from rounds.engine import Bet as EngineBet
from rounds.engine import EngineError, Seating
from rounds.models import Bet, Round
from stations.models import Station, TableSeat
from tablehub.models import Play

# A seating refusal takes off one station's bets and checks again; a table has at most this
# many stations betting behind before every refusal has been found (a guard, not a limit).
MAX_CHECKS = 10_000


def seating_of(round: Round) -> Seating | None:
    """The seating of a seat-mode round's table now (None: common draw)."""
    config = round.config
    if config.play != Play.SEAT:
        return None
    seats = {
        box: name
        for box, name in TableSeat.objects.filter(table_id=round.table_id).values_list(
            "box", "station__name"
        )
    }
    follow = Station.objects.filter(table_id=round.table_id, follow_behind=True)
    allowed = set(round.table.jurisdiction.special_bets_behind or []) & set(config.special_bets)
    return Seating(
        seats,
        frozenset(follow.values_list("name", flat=True)),
        config.behind_cap,
        frozenset(allowed),
    )


def refusals(seating: Seating, bets: Sequence[Bet]) -> dict[int, EngineError]:
    """Station id -> why its bets cannot be taken under ``seating``: a bet on an empty seat,
    behind a seat without its main bet, or a special bet behind that is not allowed; over
    the cap, the stations behind that seat."""
    refused: dict[int, EngineError] = {}
    for _ in range(MAX_CHECKS):
        left = [b for b in bets if b.station_id not in refused]
        try:
            seating.check(EngineBet(b.station.name, b.box, b.code, b.stake) for b in left)
        except EngineError as error:
            guilty = [b for b in left if b.station.name == error.station] or [
                b for b in left if b.box == error.box and seating.is_behind(b.station.name, b.box)
            ]
            for bet in guilty:
                refused[bet.station_id] = error.at(bet.station.name)
            continue
        return refused
    raise AssertionError("the seating's refusals did not settle")  # pragma: no cover
