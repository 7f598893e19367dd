"""``manage.py check_ledger``: verify the books (payouts.ledger.check); exit 1 naming each
broken invariant, 0 when they balance."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from payouts import ledger


class Command(BaseCommand):
    help = "Verify the ledger: it sums to zero, every round too, every entry has its house mirror."

    def handle(self, *args: Any, **options: Any) -> None:
        broken = ledger.check()
        for line in broken:
            self.stderr.write(line)
        if broken:
            raise CommandError(f"the ledger is broken: {len(broken)} invariant(s)", returncode=1)
        self.stdout.write("the ledger balances")
