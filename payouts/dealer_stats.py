"""Statistics per dealer and shift (issue 21, docs/integrity.md, "Statistics per dealer and
shift"): for each dealer at each table, over the rounds they dealt that were settled in a
shift, the hands dealt, the dealer's busts and blackjacks, the rank frequencies of every card
dealt against their expectation (chi-square, 12 degrees of freedom) and the hold against the
par sheets' (``z``: standard deviations apart). A figure beyond a threshold of the table's
jurisdiction (``dealer_z_threshold``, ``dealer_p_threshold``) makes the row an outlier.

A round's dealer is the one on duty when its bets closed (croupier/dealers.py). Only
settled rounds count (a voided round has no result, and its hole card may never have been
shown); replay tables count nothing (``reports.counted_rounds``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from payouts.reports import CENT, ZERO, counted_rounds, hold_lines
from payouts.rtp import special_sheet
from rounds.models import Bet, Hand, Round
from rounds.selectors import dealer_outcomes, dealt_cards
from tablehub.models import DealerReport, Jurisdiction, Table, TableConfig

RANKS = "A23456789TJQK"  # every rank is 1/13 of any shoe: its expectation
DEGREES_OF_FREEDOM = len(RANKS) - 1
# Below 5 expected cards a rank, the chi-square distribution is a poor approximation of
# the statistic's: the p-value is shown but flags nothing.
MIN_EXPECTED_PER_RANK = 5
# The main game's variance per initial stake (its standard deviation about 1.15): the main
# game's par sheet has no variance, this is the figure commonly published for multi-deck
# blackjack played by basic strategy (docs/integrity.md). The special bets' variances are
# exact, from their par sheets.
MAIN_GAME_VARIANCE = 1.32


class UnknownShift(ValueError):
    """A shift name that ``TABLEHUB_SHIFTS`` does not define."""


def shifts() -> dict[str, tuple[str, str]]:
    """The casino's shifts: name -> (start, end) as "HH:MM" in the server's time zone
    (``TABLEHUB_SHIFTS``; a shift whose end is not after its start ends the next day)."""
    return {name: (first, last) for name, (first, last) in settings.TABLEHUB_SHIFTS.items()}


def shift_range(name: str, day: date) -> tuple[datetime, datetime]:
    """The shift ``name`` that starts on ``day``: [start, end) as aware datetimes."""
    known = shifts()
    if name not in known:
        raise UnknownShift(f"unknown shift {name!r} (known: {', '.join(sorted(known))})")
    first, last = (time.fromisoformat(t) for t in known[name])
    zone = timezone.get_current_timezone()
    start = datetime.combine(day, first, tzinfo=zone)
    end = datetime.combine(day if last > first else day + timedelta(days=1), last, tzinfo=zone)
    return start, end


# -- the statistics ----------------------------------------------------------------------------


def chi_square_sf(x: float, dof: int = DEGREES_OF_FREEDOM) -> float:
    """P(X >= x) for a chi-square variable with an even number ``dof`` of degrees of freedom,
    in closed form: e^(-x/2) * sum over k < dof/2 of (x/2)^k / k!  (each term in logarithms,
    so that a large x gives a tiny p-value, not 0 * infinity)."""
    if dof <= 0 or dof % 2:
        raise ValueError("the closed form needs an even number of degrees of freedom")
    if x <= 0:
        return 1.0
    half = x / 2
    return min(
        1.0,
        math.fsum(
            math.exp(k * math.log(half) - half - math.lgamma(k + 1)) for k in range(dof // 2)
        ),
    )


def rank_test(cards: Counter[str]) -> dict[str, Any]:
    """The rank frequencies of ``cards`` (card -> copies) against 1/13 each: counts, the
    chi-square statistic (exact, then rounded to 6 places) and its p-value."""
    counts = Counter({rank: 0 for rank in RANKS})
    for card, copies in cards.items():
        counts[card[:-1]] += copies  # "TS" -> "T"
    n = sum(counts.values())
    statistic = (
        sum((Fraction(13 * counts[r] - n) ** 2 for r in RANKS), Fraction(0)) / (13 * n)
        if n
        else Fraction(0)
    )
    chi_square = float(statistic)
    return {
        "cards": n,
        "counts": {rank: counts[rank] for rank in RANKS},
        "expected_per_rank": str((Decimal(n) / 13).quantize(Decimal("0.001"))),
        "degrees_of_freedom": DEGREES_OF_FREEDOM,
        "chi_square": round(chi_square, 6),
        "p_value": chi_square_sf(chi_square),
        "enough_cards": n >= MIN_EXPECTED_PER_RANK * len(RANKS),
    }


def special_variance(sheet: dict[str, Any]) -> float:
    """The variance of a special bet's result per unit staked, exact from its par sheet: each
    combination pays its odds (an In For 6 multiplier each of its three equally likely), any
    other outcome loses the stake."""
    mean = second = hit = 0.0
    for row in sheet["combinations"]:
        pays = row["pays"]
        if pays is None:
            continue
        odds = [float(p) for p in pays] if isinstance(pays, list) else [float(pays)]
        p = float(row["probability"])
        hit += p
        mean += p * sum(odds) / len(odds)
        second += p * sum(o * o for o in odds) / len(odds)
    mean -= 1 - hit
    second += 1 - hit
    return max(second - mean * mean, 0.0)


def _spread(settled: QuerySet[Round]) -> float:
    """The standard deviation of the house's win over the rounds: the bets of one round move
    together (every box shares the dealer's cards, the stations of a box its cards), so each
    round's is bounded by the sum of its bets' (stake x the bet's standard deviation), and
    rounds add up as independent."""
    configs = {c.pk: c for c in TableConfig.objects.filter(pk__in=settled.values("config"))}
    sigma: dict[tuple[int, str], float] = {}
    by_round: dict[int, float] = {}
    bets = Bet.objects.filter(round__in=settled).values_list(
        "round_id", "round__config_id", "code", "stake"
    )
    for round_id, config_id, code, stake in bets:
        key = (config_id, code)
        if key not in sigma:
            config = configs[config_id]
            if code == "main":
                sigma[key] = math.sqrt(MAIN_GAME_VARIANCE)
            elif code in config.special_bets:
                sheet = special_sheet(code, config.special_bets[code], config.ruleset())
                sigma[key] = math.sqrt(special_variance(sheet))
            else:
                sigma[key] = 0.0
        by_round[round_id] = by_round.get(round_id, 0.0) + float(stake) * sigma[key]
    return math.sqrt(math.fsum(s * s for s in by_round.values()))


def hold(settled: QuerySet[Round]) -> dict[str, Any]:
    """The house's win over the rounds against the par sheets: the lines that have a
    theoretical return (the main game and the special bets; not insurance) give the expected
    win, ``z`` is (win - expected) / standard deviation (``_spread``)."""
    lines, total = hold_lines(settled)
    drop = sum((line.theory_drop for line in lines), ZERO)
    win = sum((line.drop - line.paid for line in lines if line.theory_drop), ZERO)
    expected = sum((line.theory_drop - line.weighted_rtp for line in lines), ZERO)
    sd = _spread(settled)
    z = float(win - expected) / sd if sd else None
    return {
        "drop": str(total.drop.quantize(CENT)),
        "win": str((total.drop - total.paid).quantize(CENT)),
        "drop_with_theory": str(drop.quantize(CENT)),
        "win_with_theory": str(win.quantize(CENT)),
        "hold_pct": str((100 * win / drop).quantize(CENT)) if drop else None,
        "hold_theoretical_pct": str((100 * expected / drop).quantize(CENT)) if drop else None,
        "win_expected": str(expected.quantize(CENT)),
        "standard_deviation": str(Decimal(sd).quantize(CENT)),
        "z": round(z, 4) if z is not None else None,
    }


@dataclass(frozen=True)
class Thresholds:
    z: Decimal
    p: Decimal

    @classmethod
    def of(cls, jurisdiction: Jurisdiction) -> Thresholds:
        return cls(jurisdiction.dealer_z_threshold, jurisdiction.dealer_p_threshold)


def dealer_row(
    dealer_id: int, table: Table, settled: QuerySet[Round], thresholds: Thresholds
) -> dict[str, Any]:
    """One dealer's statistics at one table over ``settled`` (their settled rounds)."""
    rounds = list(settled.select_related("table", "config").order_by("pk"))
    outcomes = dealer_outcomes(rounds)
    hands = len(rounds)
    busts = sum(1 for o in outcomes.values() if o["bust"])
    blackjacks = sum(1 for o in outcomes.values() if o["blackjack"])
    boxes_blackjack = (
        Hand.objects.filter(round__in=settled, result="blackjack")
        .values("round", "box")
        .distinct()
        .count()
    )
    ranks = rank_test(dealt_cards(r.pk for r in rounds))
    money = hold(settled)
    flags = []
    if money["z"] is not None and abs(Decimal(str(money["z"]))) > thresholds.z:
        flags.append("hold")
    if ranks["enough_cards"] and Decimal(repr(ranks["p_value"])) < thresholds.p:
        flags.append("ranks")
    user = get_user_model().objects.get(pk=dealer_id)
    return {
        "dealer": {"id": dealer_id, "username": user.get_username()},
        "table": {"id": table.pk, "name": table.name, "currency": table.currency},
        "hands": hands,
        "dealer_busts": busts,
        "bust_rate_pct": str((Decimal(100 * busts) / hands).quantize(CENT)) if hands else None,
        "dealer_blackjacks": blackjacks,
        "box_blackjacks": boxes_blackjack,
        "ranks": ranks,
        "hold": money,
        "thresholds": {"z": str(thresholds.z), "p": str(thresholds.p)},
        "flags": flags,
        "outlier": bool(flags),
    }


def dealer_report(
    start: datetime,
    end: datetime,
    dealers: Iterable[int] | None = None,
    tables: Iterable[int] | None = None,
) -> dict[str, Any]:
    """The statistics of every dealer at every table (or of the ``dealers``, ``tables`` given)
    over the rounds settled in [start, end): one row per dealer and table."""
    settled = counted_rounds().filter(
        phase=Round.Phase.SETTLED, settled_at__gte=start, settled_at__lt=end, dealer__isnull=False
    )
    if dealers is not None:
        settled = settled.filter(dealer_id__in=list(dealers))
    if tables is not None:
        settled = settled.filter(table_id__in=list(tables))
    pairs = (
        settled.values_list("dealer_id", "table_id").distinct().order_by("table_id", "dealer_id")
    )
    rows = []
    for dealer_id, table_id in pairs:
        table = Table.objects.select_related("jurisdiction").get(pk=table_id)
        mine = settled.filter(dealer_id=dealer_id, table_id=table_id)
        rows.append(dealer_row(dealer_id, table, mine, Thresholds.of(table.jurisdiction)))
    return {"start": start.isoformat(), "end": end.isoformat(), "rows": rows}


def keep(report: dict[str, Any], shift: str = "") -> list[DealerReport]:
    """Store the report's rows for the admin (one per dealer, table and range: a new run of
    the same range replaces them)."""
    start, end = datetime.fromisoformat(report["start"]), datetime.fromisoformat(report["end"])
    kept = []
    with transaction.atomic():
        for row in report["rows"]:
            kept.append(
                DealerReport.objects.update_or_create(
                    dealer_id=row["dealer"]["id"],
                    table_id=row["table"]["id"],
                    start=start,
                    end=end,
                    defaults={
                        "shift": shift,
                        "hands": row["hands"],
                        "dealer_busts": row["dealer_busts"],
                        "dealer_blackjacks": row["dealer_blackjacks"],
                        "chi_square": row["ranks"]["chi_square"],
                        "p_value": row["ranks"]["p_value"],
                        "hold_z": row["hold"]["z"],
                        "outlier": row["outlier"],
                        "flags": row["flags"],
                        "result": row,
                    },
                )[0]
            )
    return kept
