"""``manage.py verify_shoe SHOE_ID | FILE | -``: check a virtual shoe against the commitment
published before its first card (docs/integrity.md, "The provably fair virtual shoe").

With a shoe's id, every revealed shuffle of that shoe, the cards dealt as their rounds'
events logged them; with a file (``-``: standard input), the JSON of one revealed shuffle
(``commitment``, ``server_seed``, ``station_seeds``, ``order``, ``dealt``: the
``shoe_revealed`` event, or a list of them). Exits 0 when all verify, else 1 with one line
on stderr per shuffle that fails, naming what fails (the commitment, the order, or the card
and its position)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tablehub import fair_shoe
from tablehub.models import Shoe


class Command(BaseCommand):
    help = "Check a virtual shoe's cards against its commitment (a shoe id, or a JSON file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "shoe", help="a shoe's id, or a JSON file of a revealed shuffle (-: stdin)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        target: str = options["shoe"]
        if target.isdigit():
            shoe = Shoe.objects.filter(pk=int(target)).first()
            if shoe is None:
                raise CommandError(f"no shoe {target}", returncode=1)
            fine, failed = fair_shoe.check_shoe(shoe)
        else:
            fine, failed = self.check_records(self.read(target))
        for line in fine:
            self.stdout.write(line)
        for line in failed:
            self.stderr.write(line)
        if failed:
            raise CommandError(f"the shoe does not verify: {len(failed)} failure(s)", returncode=1)

    def read(self, target: str) -> list[Any]:
        try:
            text = sys.stdin.read() if target == "-" else Path(target).read_text()
            data = json.loads(text)
        except (OSError, ValueError) as exc:
            raise CommandError(f"{target}: not a JSON file: {exc}", returncode=1) from None
        return data if isinstance(data, list) else [data]

    def check_records(self, records: list[Any]) -> tuple[list[str], list[str]]:
        fine: list[str] = []
        failed: list[str] = []
        for n, data in enumerate(records, start=1):
            shuffle = data.get("shuffle", n) if isinstance(data, dict) else n
            ok, line = fair_shoe.check_record(f"shuffle {shuffle}", data)
            (fine if ok else failed).append(line)
        return fine, failed
