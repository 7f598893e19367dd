"""Table reports: per table and time range (a shift), what was played and what it held.

Rounds count when they were settled in ``[start, end)``; voided rounds (every stake
refunded) are counted apart and hold nothing. For the main game (every hand's stake,
doubles and splits included), insurance and each special bet:

* ``drop``: the total staked; ``paid``: the total returned to the stations (stakes back
  included); ``win``: drop − paid, the house's result; ``hold_pct``: win / drop in percent;
* ``rtp_theoretical_pct``: the return the par sheets promise for the configuration versions
  the rounds were played under (a stake-weighted mean when the version changed during the
  shift; insurance has none), ``hold_theoretical_pct`` = 100 − it, ``win_expected`` = drop ×
  that hold, ``win_difference`` = win − win_expected.

The totals are checked against the ledger: ``ledger.staked`` and ``ledger.paid`` are the
stations' stake and return entries of the same rounds, and ``ledger.balanced`` says that
they equal the report's drop and paid. ``ledger.house_loss`` is what voids and corrections
of the report's rounds (settled and voided) took back beyond a station's credits: the
house's loss, apart from the win.

A replay table (``Table.is_replay``: made by ``play_scenario --live`` on a running server)
counts nothing: its report has no rounds (``table.is_replay`` says why), and a report of
several tables (``reports_csv``) leaves it out.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from payouts.models import LedgerEntry
from payouts.rtp import main_sheet, special_sheet
from rounds import chain
from rounds.models import Bet, Hand, Round
from tablehub.models import Table, TableConfig

ZERO = Decimal("0")
CENT = Decimal("0.01")
COLUMNS = (
    "bet",
    "rounds",
    "bets",
    "drop",
    "paid",
    "win",
    "hold_pct",
    "rtp_theoretical_pct",
    "hold_theoretical_pct",
    "win_expected",
    "win_difference",
)


def _pct(value: Decimal | None) -> str | None:
    return None if value is None else str((value * 100).quantize(CENT))


def _money(value: Decimal) -> str:
    return str(value.quantize(CENT))


class _Line:
    def __init__(self, bet: str) -> None:
        self.bet = bet
        self.rounds = 0
        self.bets = 0
        self.drop = ZERO
        self.paid = ZERO
        self.weighted_rtp = ZERO  # sum of drop x theoretical rtp
        self.theory_drop = ZERO  # the drop that has a theoretical rtp

    def add(self, rounds: int, bets: int, drop, paid, rtp: Decimal | None) -> None:
        drop, paid = drop or ZERO, paid or ZERO
        self.rounds += rounds
        self.bets += bets
        self.drop += drop
        self.paid += paid
        if rtp is not None:
            self.weighted_rtp += drop * rtp
            self.theory_drop += drop

    def row(self) -> dict[str, Any]:
        win = self.drop - self.paid
        rtp = self.weighted_rtp / self.theory_drop if self.theory_drop else None
        expected = (self.drop * (1 - rtp)).quantize(CENT) if rtp is not None else None
        return {
            "bet": self.bet,
            "rounds": self.rounds,
            "bets": self.bets,
            "drop": _money(self.drop),
            "paid": _money(self.paid),
            "win": _money(win),
            "hold_pct": _pct(win / self.drop) if self.drop else None,
            "rtp_theoretical_pct": _pct(rtp),
            "hold_theoretical_pct": _pct(1 - rtp) if rtp is not None else None,
            "win_expected": _money(expected) if expected is not None else None,
            "win_difference": _money(win - expected) if expected is not None else None,
        }


def table_report(
    table: Table, start: datetime, end: datetime, theoretical: bool = True
) -> dict[str, Any]:
    """The report of ``table`` for rounds settled in ``[start, end)`` (module docstring).
    With ``theoretical=False`` the par sheets are not read (no theoretical columns)."""
    rounds = counted_rounds().filter(table=table)
    settled = rounds.filter(phase=Round.Phase.SETTLED, settled_at__gte=start, settled_at__lt=end)
    voided = (
        rounds.filter(phase=Round.Phase.VOID)
        .annotate(at=Coalesce("settled_at", "created_at"))
        .filter(at__gte=start, at__lt=end)
    )
    lines, total = hold_lines(settled, theoretical)
    configs = TableConfig.objects.filter(pk__in=settled.values("config"))

    ledger = dict(
        LedgerEntry.objects.filter(round__in=settled, station__isnull=False)
        .values_list("kind")
        .annotate(total=Sum("amount"))
    )
    staked = -(ledger.get(LedgerEntry.Kind.STAKE) or ZERO)
    paid = ledger.get(LedgerEntry.Kind.RETURN) or ZERO
    # What voids and corrections took back beyond a station's credits (payouts.ledger): the
    # house's loss, counted apart from the win.
    house_loss = (
        LedgerEntry.objects.filter(
            Q(round__in=settled) | Q(round__in=voided.values("pk")),
            station__isnull=False,
            kind=LedgerEntry.Kind.HOUSE_LOSS,
        ).aggregate(total=Sum("amount"))["total"]
        or ZERO
    )
    return {
        "table": {
            "id": table.pk,
            "name": table.name,
            "currency": table.currency,
            "is_replay": table.is_replay,
        },
        "start": start.isoformat(),
        "end": end.isoformat(),
        "rounds_played": total.rounds,
        "rounds_voided": voided.count(),
        "stations": Bet.objects.filter(round__in=settled).values("station").distinct().count(),
        "config_versions": sorted(c.version for c in configs),
        "lines": [line.row() for line in lines],
        "total": total.row(),
        "ledger": {
            "staked": _money(staked),
            "paid": _money(paid),
            "balanced": staked == total.drop and paid == total.paid,
            "house_loss": _money(house_loss),
        },
        # The table's hash chains as they stood at ``end`` (rounds/chain.py): printed, they
        # let anyone show later that the history was not rewritten.
        "chain_heads": chain.heads_at(table.pk, end),
    }


def hold_lines(settled: QuerySet[Round], theoretical: bool = True) -> tuple[list[_Line], _Line]:
    """The hold of the ``settled`` rounds: a line for the main game, insurance (when staked)
    and each special bet, against the par sheets of the configurations they were played
    under (none with ``theoretical=False``), and their total (module docstring)."""
    configs = {c.pk: c for c in TableConfig.objects.filter(pk__in=settled.values("config"))}
    main_rtp: dict[int, Decimal | None] = {}
    for pk, config in configs.items():
        sheet = main_sheet(config.ruleset()) if theoretical else None
        main_rtp[pk] = Decimal(str(sheet["rtp"])) if sheet else None

    main, insurance = _Line("main"), _Line("insurance")
    hands = (
        Hand.objects.filter(round__in=settled)
        .values("round__config")
        .annotate(
            rounds=Count("round", distinct=True),
            n=Count("pk"),
            drop=Sum("stake"),
            paid=Sum("returned"),
            ins_rounds=Count("round", distinct=True, filter=Q(insurance__isnull=False)),
            ins_n=Count("insurance"),
            ins_drop=Sum("insurance"),
            ins_paid=Sum("insurance_returned"),
        )
    )
    for row in hands:
        main.add(row["rounds"], row["n"], row["drop"], row["paid"], main_rtp[row["round__config"]])
        insurance.add(row["ins_rounds"], row["ins_n"], row["ins_drop"], row["ins_paid"], None)

    specials: dict[str, _Line] = {}
    bets = (
        Bet.objects.filter(round__in=settled)
        .exclude(code="main")
        .values("code", "round__config")
        .annotate(
            rounds=Count("round", distinct=True),
            n=Count("pk"),
            drop=Sum("stake"),
            paid=Sum("returned"),
        )
        .order_by("code")
    )
    for bet_row in bets:
        code, config = bet_row["code"], configs[bet_row["round__config"]]
        rtp = None
        if theoretical and code in config.special_bets:
            sheet = special_sheet(code, config.special_bets[code], config.ruleset())
            rtp = Decimal(str(sheet["rtp"]))
        line = specials.setdefault(code, _Line(code))
        line.add(bet_row["rounds"], bet_row["n"], bet_row["drop"], bet_row["paid"], rtp)

    lines = [main]
    if insurance.bets:
        lines.append(insurance)
    lines += [specials[code] for code in sorted(specials)]
    total = _Line("total")
    total.rounds = settled.count()
    for line in lines:
        total.bets += line.bets
        total.drop += line.drop
        total.paid += line.paid
        total.weighted_rtp += line.weighted_rtp
        total.theory_drop += line.theory_drop
    if total.theory_drop != total.drop:  # some drop has no theory (insurance): no total rtp
        total.weighted_rtp = total.theory_drop = ZERO

    return lines, total


def counted_rounds() -> QuerySet[Round]:
    """The rounds reports count: every round but those of replay tables."""
    return Round.objects.filter(table__is_replay=False)


def report_csv(report: dict[str, Any]) -> str:
    """The report's lines and total as CSV, one row per bet, the table and range repeated."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("table", "start", "end", *COLUMNS))
    rows = report["lines"] + [report["total"]]
    for row in rows:
        values = ["" if row[c] is None else row[c] for c in COLUMNS]
        writer.writerow((report["table"]["name"], report["start"], report["end"], *values))
    return out.getvalue()


def reports_csv(reports: list[dict[str, Any]]) -> str:
    """Several tables' reports in one CSV (one header); replay tables' are left out."""
    parts = [report_csv(r) for r in reports if not r["table"].get("is_replay")]
    if not parts:
        return ",".join(("table", "start", "end", *COLUMNS)) + "\n"
    return parts[0] + "".join(p.split("\n", 1)[1] for p in parts[1:])
