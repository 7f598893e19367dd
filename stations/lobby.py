"""The stadium lobby (issue 22, point 5): a station of a stadium lists the stadium's tables
and moves among them between rounds, with its credits.

A stadium (tablehub.models.Stadium) groups tables of any mode and dealer. A station that
belongs to one plays at one of its tables at a time (``Station.table``) and may move to
another of them: only between rounds (no bet of its on its table's open round: a station
has bets at one table at a time), only to an open table of its stadium in the same
currency, and only when no station of its name is at that table already (a station's name
is unique per table; the floor manager names a stadium's stations apart). The move is the
ledger's (``payouts.ledger.move``): the credits leave the table's books and arrive in the
other's, keyed by the client's key so that a move sent again is written once, and the
station's credits stay what they were, to the cent; a station sitting at a seat (seat mode)
gets up first. Every refusal changes nothing.

Who counts as a table's player (``players``): a station of the table holding credits there,
or with a bet on its open round (its stakes may be all its credits) — what the ledger and
the round say, on any number of server processes, where a socket is only one process's.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import reverse

from payouts import ledger
from rounds import writer
from rounds.engine import EngineError
from rounds.models import Bet, Round
from stations import seats
from stations.models import Station, TableSeat
from stations.selectors import limits_shown
from tablehub.models import Play, Table, TableConfig

# The rules a table's line in the lobby shows (all of them: the table's "Rules and
# paytables" panel once the station is there).
RULES_SHOWN = ("decks", "blackjack_pays", "dealer_hits_soft_17", "hole_card", "late_surrender")


def play_of(config: TableConfig | None) -> str:
    """How the table's players share the boxes: common draw, or seat mode (``TableConfig.play``)."""
    return config.play if config is not None else Play.COMMON_DRAW


def station_page(station: Station, table: Table) -> str:
    """The station page of the station at ``table``."""
    return reverse("station-page", args=[table.pk, station.name])


def stadium_tables(station: Station) -> list[dict[str, Any]]:
    """Each table of the station's stadium, by name (a station of no stadium: its own
    table): its set-up, whether it is open, its players and its dealer on duty."""
    if station.stadium_id is None:
        tables = [station.table]
    else:
        tables = list(
            Table.objects.filter(stadium_id=station.stadium_id)
            .select_related("dealer")
            .order_by("name", "pk")
        )
    players = _players([table.pk for table in tables])
    lines = []
    for table in tables:
        config = table.current_config()
        rules = config.ruleset().to_dict() if config is not None else None
        dealer = table.dealer if table.mode == Table.Mode.DEALER else None
        lines.append(
            {
                "table_id": table.pk,
                "table": table.name,
                "here": table.pk == station.table_id,
                "mode": table.mode,
                "play": play_of(config),
                "open": table.is_open,
                "currency": table.currency,
                "boxes": table.boxes,
                "rules": {name: rules[name] for name in RULES_SHOWN} if rules else None,
                "limits": limits_shown(config) if config is not None else {},
                "special_bets": config.offered_special_bets() if config is not None else [],
                "players": players.get(table.pk, 0),
                "dealer": (dealer.first_name or dealer.username) if dealer is not None else None,
            }
        )
    return lines


def _players(table_ids: list[int]) -> dict[int, int]:
    """Each table's players: its active stations with credits, or with a bet on its open
    round."""
    stations = dict(
        Station.objects.filter(table_id__in=table_ids, is_active=True).values_list("pk", "table_id")
    )
    credits = ledger.balances(stations)
    betting = set(
        Bet.objects.filter(station_id__in=stations)
        .exclude(round__phase__in=[Round.Phase.SETTLED, Round.Phase.VOID])
        .values_list("station_id", flat=True)
    )
    counted: dict[int, int] = {}
    for pk, table_id in stations.items():
        if credits[pk] > 0 or pk in betting:
            counted[table_id] = counted.get(table_id, 0) + 1
    return counted


def move_station(station: Station, to_table_id: int, client_key: str) -> Table:
    """Move the station to another table of its stadium, with its credits, between rounds;
    the table it moved to. ``station`` is changed in place (its ``table``). Refused, having
    changed nothing: ``not_in_stadium`` (no such table in the station's stadium, or a
    station of no stadium), ``same_table``, ``table_closed``, ``other_jurisdiction``,
    ``other_currency``, ``name_taken`` (a station of its name is at that table) and
    ``bets_unsettled`` (a bet of the station's on its table's open round)."""
    target = Table.objects.filter(pk=to_table_id).first()
    if target is None or station.stadium_id is None or target.stadium_id != station.stadium_id:
        raise EngineError(
            f"table {to_table_id} is not a table of the station's stadium", code="not_in_stadium"
        )
    if target.pk == station.table_id:
        raise EngineError("the station is at that table already", code="same_table")
    if not target.is_open:
        raise EngineError(f"table {target.pk} is closed", code="table_closed")
    if target.jurisdiction_id != station.table.jurisdiction_id:
        # The player's session, limits and protection follow the jurisdiction's rules: a
        # move must not carry them to a table that plays under other ones.
        raise EngineError(
            f"table {target.pk} plays under another jurisdiction than the station's table",
            code="other_jurisdiction",
        )
    if target.currency != station.table.currency:
        raise EngineError(
            f"table {target.pk} plays in {target.currency}, the station's credits are in "
            f"{station.table.currency}",
            code="other_currency",
        )
    if Station.objects.filter(table=target, name=station.name).exists():
        raise EngineError(
            f"table {target.pk} has a station named {station.name} already", code="name_taken"
        )
    with transaction.atomic():
        # The lock order of a bet change and a cash-out (the round, then the chain heads,
        # then the station): a bet and a move at once are one after the other.
        round = writer.current_round(station.table_id)
        if round is not None:
            Round.objects.select_for_update(no_key=True).filter(pk=round.pk).first()
        ledger.lock_for_move(station, target.pk)
        if round is not None and round.bets.filter(station=station).exists():
            raise EngineError(
                "the station has bets on the table's open round: move once they are settled",
                code="bets_unsettled",
            )
        if TableSeat.objects.filter(station=station).exists():
            seats.leave_seat(station)  # a seat is at one table: the station gets up first
        ledger.move(station, target.pk, client_key)
        station.table = target
        station.save(update_fields=["table"])  # kept in the station's audit history
    return target
