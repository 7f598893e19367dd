"""The demo table: a whole table on the embedded default, with no hardware.

``ensure_demo_table`` creates (or finds) a three-box table with two stations, a virtual
shoe, a dealer and a supervisor login, and opens it; ``play`` makes it a seat-mode table
(one player a seat, others betting behind it, up to ``behind_cap``); ``ensure_demo_stadium``
puts demo tables and their stations in the demo stadium, whose stations move among its
tables (the lobby, stations/lobby.py). The README's run command calls it through
``manage.py demo_table``; browser tests use it too, so the demo is what is tested.
The credentials are demo values, printed for the person trying the table: a real table's
are set by a floor manager and never shown again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import Group, User
from django.db import transaction

from payouts.specials.defaults import default_paytable_rows
from rounds.engine import RuleSet
from stations.models import Station
from tablehub import roles
from tablehub.models import Jurisdiction, Play, Stadium, Table, TableConfig

DEMO_SPECIAL_BETS = ("21+3", "pair", "lucky_ladies", "bust")
# The demo lets a newcomer try the dispute flow (seed 001 §3.7): disputes on, and a settled
# round stays disputable for a minute.
DEMO_DISPUTE_WINDOW_SECONDS = 60
DEMO_JURISDICTION = "demo"
DEMO_STADIUM = "Demo stadium"
STAFF = {"dealer": roles.DEALER, "supervisor": roles.SUPERVISOR}


@dataclass
class Demo:
    table: Table
    station_credentials: dict[str, str] = field(default_factory=dict)
    reader_key: str = ""
    logins: dict[str, str] = field(default_factory=dict)  # username -> password


def demo_special_bets() -> dict[str, dict]:
    offered = {}
    for code in DEMO_SPECIAL_BETS:
        if code in default_paytable_rows():
            offered[code] = default_paytable_rows()[code]["pays"]
    return offered


def demo_credential(station: Station) -> str | None:
    """The demo credential of a station of a demo-jurisdiction table, while it still opens
    the station (a floor manager may have changed it); None for every other station. The
    front door links the demo's stations with it, as ``./dev run`` prints them."""
    credential = f"demo-{station.name}"
    if station.table.jurisdiction.code != DEMO_JURISDICTION:
        return None
    return credential if station.check_credential(credential) else None


@transaction.atomic
def ensure_demo_table(
    name: str = "Demo table",
    stations: tuple[str, ...] = ("s1", "s2"),
    mode: str = Table.Mode.DEALER,
    timers: dict[str, float] | None = None,
    play: str = Play.COMMON_DRAW,
    behind_cap: Decimal | None = None,
) -> Demo:
    jurisdiction, _ = Jurisdiction.objects.get_or_create(
        code=DEMO_JURISDICTION, defaults={"name": "Demo (no real money)"}
    )
    if not jurisdiction.disputes_allowed:  # also a demo database made before disputes were on
        jurisdiction.disputes_allowed = True
        jurisdiction.dispute_window_seconds = DEMO_DISPUTE_WINDOW_SECONDS
        jurisdiction.save(update_fields=["disputes_allowed", "dispute_window_seconds"])
    if not jurisdiction.tips_allowed:  # the demo lets a station tip the dealer (seed 001 §4.1)
        jurisdiction.tips_allowed = True
        jurisdiction.save(update_fields=["tips_allowed"])
    table, created = Table.objects.get_or_create(
        name=name, defaults={"jurisdiction": jurisdiction, "boxes": 3, "mode": mode}
    )
    demo = Demo(table=table, reader_key=f"demo-reader-{table.pk}")
    if created:
        table.set_reader_key(demo.reader_key)
        table.save()
        TableConfig.objects.create(
            table=table,
            version=1,
            rules=RuleSet(decks=6).to_dict(),
            limits={"main": ["1", "500"], "special": ["1", "100"], "let_it_play": ["0", "1000"]},
            timers=timers or {"betting": 20, "insurance": 10, "decision": 15, "bonus": 10},
            special_bets=demo_special_bets(),
            play=play,
            behind_cap=behind_cap,
        )
    for station_name in stations:
        credential = f"demo-{station_name}"
        # A demo station that moved to another table of the demo stadium stays there.
        station = (
            Station.objects.filter(table=table, name=station_name).first()
            or Station.objects.filter(name=station_name, stadium__name=DEMO_STADIUM).first()
            or Station(table=table, name=station_name)
        )
        station.set_credential(credential)
        station.save()
        demo.station_credentials[station_name] = credential
    for username, role in STAFF.items():
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(username)
        user.is_staff = False  # tablet staff never reach the admin
        user.save()
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        table.staff.add(user)  # dealers and supervisors open only their tables' tablets
        demo.logins[username] = username
    return demo


@transaction.atomic
def ensure_demo_stadium(demos: list[Demo]) -> Stadium:
    """The demo stadium, holding the demos' tables and their stations (their names differ
    from table to table, so each may move to every other table)."""
    stadium, _ = Stadium.objects.get_or_create(name=DEMO_STADIUM)
    tables = [demo.table for demo in demos]
    Table.objects.filter(pk__in=[table.pk for table in tables]).update(stadium=stadium)
    Station.objects.filter(table__in=tables).update(stadium=stadium)
    for table in tables:
        table.stadium = stadium
    return stadium
