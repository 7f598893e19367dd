"""``manage.py demo_table``: set up (or find) the demo tables and print how to reach them.

A live-dealer demo table (the croupier page deals from the virtual shoe when asked) and a
video-mode table (the virtual shoe deals by itself); both open, two stations each, in the
demo stadium (a station moves between them from its page's "Tables" panel). With
``--seats``, also a live-dealer seat-mode table in the stadium (three stations: one player a
seat, the others betting behind it).
"""

from __future__ import annotations

from decimal import Decimal

from django.core.management.base import BaseCommand

from rounds.models import UNFINISHED
from rounds.writer import open_round
from stations.models import Station
from tablehub.demo import DEMO_DISPUTE_WINDOW_SECONDS, ensure_demo_stadium, ensure_demo_table
from tablehub.models import Play, Table


class Command(BaseCommand):
    help = "Set up the demo tables (live dealer and video mode) and print their pages."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument(
            "--seats", action="store_true", help="also a seat-mode demo table (bets behind)"
        )

    def handle(self, *args, base_url: str, seats: bool = False, **options) -> None:
        live = ensure_demo_table()
        video = ensure_demo_table(
            name="Video demo table",
            stations=("v1", "v2"),
            mode=Table.Mode.VIDEO,
            timers={"betting": 15, "insurance": 8, "decision": 10, "bonus": 8, "video_card": 0.8},
        )
        demos = [live, video]
        if seats:
            demos.append(
                ensure_demo_table(
                    name="Seat demo table",
                    stations=("p1", "p2", "p3"),
                    play=Play.SEAT,
                    behind_cap=Decimal("200"),
                )
            )
        stadium = ensure_demo_stadium(demos)
        for demo in demos:
            table = demo.table
            if not table.is_open:
                table.is_open = True
                table.save(update_fields=["is_open"])
            if not table.rounds.filter(phase__in=UNFINISHED).exists():
                open_round(table)
        write = self.stdout.write
        write(f"Front door (every table, its status and links): {base_url}/")
        for demo in demos:
            table = demo.table
            write(f"{table.name}, table {table.pk}, {table.get_mode_display()}:")
            write(f"  reader key: {demo.reader_key}")
            if table.mode == Table.Mode.DEALER:
                write(f"  croupier tablet: {base_url}/croupier/tables/{table.pk}/")
                write("    log in as dealer / dealer (supervisor: supervisor / supervisor)")
            for name, credential in demo.station_credentials.items():
                # where the station plays now (it may have moved within the demo stadium)
                at = Station.objects.get(name=name, stadium=stadium).table_id
                write(
                    f"  station {name} (credential {credential}): "
                    f"{base_url}/tables/{at}/stations/{name}/#credential={credential}"
                )
        write(
            f"The tables are in the {stadium.name}: a station moves to another table from "
            "its page's tables panel, between rounds, with its credits."
        )
        write(
            f"Disputes are allowed, and a settled round may be disputed for "
            f"{DEMO_DISPUTE_WINDOW_SECONDS} s. API documentation: {base_url}/api/docs/"
        )
