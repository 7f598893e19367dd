"""The front door (``/``): what this server is, and each table with its status and the links
of each role (its stations, the croupier tablet, the admin, the API's documentation).

A read-only summary built from the models; the demo's stations are linked with their demo
credential (``tablehub.demo.demo_credential``), every other station's page asks for its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q

from rounds.models import UNFINISHED, Round
from tablehub.demo import demo_credential
from tablehub.models import Table

MAX_STATION_LINKS = 12  # a stadium's hundreds of stations are counted, not listed


@dataclass
class StationLink:
    name: str
    credential: str | None  # the demo's, else None: the page asks for it


@dataclass
class TableEntry:
    table: Table
    stations: int
    round: Round | None  # the open round, else the table's newest
    station_links: list[StationLink] = field(default_factory=list)

    @property
    def status(self) -> str:
        state = "open" if self.table.is_open else "closed"
        if self.round is None:
            return f"{state}, no round yet"
        return f"{state}, round {self.round.number}: {self.round.get_phase_display()}"


def table_entries() -> list[TableEntry]:
    """Every table but the replays of play_scenario, in the order they were set up."""
    tables = (
        Table.objects.filter(is_replay=False)
        .select_related("jurisdiction")
        .annotate(active=Count("stations", filter=Q(stations__is_active=True)))
        .order_by("pk")
    )
    entries = []
    for table in tables:
        round = (
            table.rounds.filter(phase__in=UNFINISHED).order_by("-pk").first()
            or table.rounds.order_by("-pk").first()
        )
        entry = TableEntry(table=table, stations=table.active, round=round)
        for station in table.stations.filter(is_active=True).order_by("pk")[:MAX_STATION_LINKS]:
            station.table = table
            entry.station_links.append(StationLink(station.name, demo_credential(station)))
        entries.append(entry)
    return entries
