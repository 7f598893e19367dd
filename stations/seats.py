"""Seat mode for a station: take a seat, leave it, and choose whether bets behind follow.

A seat-mode table (``TableConfig.play``) has one seat a box (1 to 7); a station takes a free
seat between rounds (``take_seat``: while bets are open or no round is on) and the seat's
box is then its box alone; any other station's bet on that box is a bet behind the seat
(``check_bet``). ``leave_seat`` frees the seat: between rounds at once; in the middle of a
round the table records that the player left (``SeatLeft``), and the seat's questions are
answered by the jurisdiction's abandoned-hands rule at once, those behind following
(rounds/writer.py). ``set_follow`` is the station's standing choice for doubles and splits
behind a seat; a round takes the seats and the choices as they are when its bets close
(rounds/seats.py).

Every change is told to the table as a ``seats`` event (docs/protocol.md).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction

from rounds import writer
from rounds.engine import Bet as EngineBet
from rounds.engine import EngineError, Notice, SeatLeft
from rounds.engine.money import fmt
from rounds.models import Bet, Round
from rounds.seats import seating_of
from stations.models import Station, TableSeat
from tablehub import broadcast
from tablehub.models import Play, Table, TableConfig


def is_seat_mode(config: TableConfig | None) -> bool:
    return config is not None and config.play == Play.SEAT


def seats_of(table_id: int) -> dict[str, str]:
    """Who sits where: seat (as text, the protocol's keys) -> station name."""
    rows = TableSeat.objects.filter(table_id=table_id).values_list("box", "station__name")
    return {str(box): name for box, name in sorted(rows)}


def take_seat(station: Station, box: int) -> None:
    """Sit ``station`` at seat ``box`` of its table, between rounds."""
    table = station.table
    if not is_seat_mode(table.current_config()):
        raise EngineError("this table plays common draw: it has no seats", code="not_seat_mode")
    if not 1 <= box <= table.boxes:
        raise EngineError(f"the table has seats 1 to {table.boxes}", box=box, code="no_such_seat")
    _between_rounds(table, "take a seat")
    if TableSeat.objects.filter(station=station).exists():
        raise EngineError("this station already has a seat", box=box, code="already_seated")
    try:
        with transaction.atomic():
            TableSeat.objects.create(table=table, box=box, station=station)
    except IntegrityError:  # another station took it first: the constraint decides
        raise EngineError(f"seat {box} is taken", box=box, code="seat_taken") from None
    _tell_seats(table)


def leave_seat(station: Station) -> None:
    """Free the station's seat. Mid-round, the round records that its player left, and the
    table answers for the seat from then on."""
    seat = TableSeat.objects.filter(station=station).first()
    if seat is None:
        raise EngineError("this station has no seat", code="not_seated")
    round = writer.current_round(station.table_id)
    if round is not None and round.phase == Round.Phase.BETTING:
        if Bet.objects.filter(round=round, station=station, box=seat.box).exists():
            raise EngineError(
                "take your bets off the seat before leaving it", box=seat.box, code="seat_has_bets"
            )
    elif round is not None and writer.read(
        round.pk, lambda engine: _plays_the_seat(engine, station.name)
    ):
        writer.record(round.pk, SeatLeft(station.name))
    seat.delete()
    _tell_seats(station.table)


def set_follow(station: Station, follow: bool) -> None:
    """Whether the station's bets behind a seat follow the seat's doubles and splits (when
    its credits cover them); taken up by the next round whose bets close."""
    if station.follow_behind != follow:
        station.follow_behind = follow
        station.save(update_fields=["follow_behind"])


def check_bet(station: Station, round: Round, totals: dict[tuple[int, str], Decimal]) -> None:
    """A station's bets on a seat-mode round: on its own seat, or behind a seated one (a
    main bet, a special bet the jurisdiction allows behind), within the cap behind a seat,
    counting the other stations' bets behind it. The seating's own check, as at the close
    of bets (rounds/seats.py), but for the seat's main bet, which may still come."""
    seating = seating_of(round)
    if seating is None:
        return
    mine = [
        EngineBet(station.name, box, code, stake) for (box, code), stake in sorted(totals.items())
    ]
    others = []
    if seating.behind_cap is not None:
        boxes = {box for (box, _code) in totals}
        others = [
            EngineBet(b.station.name, b.box, b.code, b.stake)
            for b in writer.bets_on_boxes(round, boxes)
            if b.station_id != station.pk
        ]
    seating.check(mine, placing=True, others=others)


def seating_state(station: Station, config: TableConfig | None) -> dict[str, Any] | None:
    """What a station's state says of the seats (None at a common-draw table)."""
    if not is_seat_mode(config):
        return None
    assert config is not None
    own = TableSeat.objects.filter(station=station).values_list("box", flat=True).first()
    return {
        "seats": seats_of(station.table_id),
        "seat": own,
        "follow": station.follow_behind,
        "behind_cap": None if config.behind_cap is None else fmt(config.behind_cap),
    }


def _between_rounds(table: Table, what: str) -> None:
    round = writer.current_round(table.pk)
    if round is not None and round.phase != Round.Phase.BETTING:
        raise EngineError(f"{what} between rounds: this round is in play", code="round_in_play")


def _plays_the_seat(engine: Any, name: str) -> bool:
    seating = engine.seating
    return (
        seating is not None
        and not engine.settled
        and name in seating.seats.values()
        and name not in engine.left
    )


def _tell_seats(table: Table) -> None:
    """Every station and the tablet learn who sits where, once this transaction commits."""
    last = table.rounds.order_by("-pk").values_list("pk", "last_seq").first() or (0, 0)
    notice = Notice("public", {"type": "seats", "seats": seats_of(table.pk)})
    broadcast.publish_news_on_commit(table.pk, last[0], last[1], [notice])
