"""What a station reads back besides the open round: the table's set-up, its own last rounds
(staked, returned) and the table's last dealer outcomes (docs/protocol.md, "State").

Every history is bounded to the last ``HISTORY`` rounds. Money comes from the ledger (so
doubles, splits, insurance and special bets are all in it); a dealer outcome from the round's
event log, replayed once per settled round and then kept in the cache (it never changes).
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db.models import Sum

from payouts.max_win import max_wins
from payouts.models import LedgerEntry
from payouts.rtp import special_sheet
from rounds import writer
from rounds.engine import EngineError
from rounds.engine.money import ZERO, fmt
from rounds.models import Round
from rounds.selectors import dealer_outcomes
from stations.models import Station
from tablehub.compiled import CompiledQuery, Param
from tablehub.models import Table, TableConfig

HISTORY = 20
WIN_CLASSES = ("regular", "nice", "big")
# The effective timer of each timed step, by the name the table configuration uses.
TIMED_STEPS = {"betting": "betting", "insurance": "insurance", "bonus": "bonus", "decision": "play"}


# A batch's session check (tablehub/compiled.py: its SQL built once).
_ACTIVE_AT_TABLE = CompiledQuery(
    lambda: Station.objects.filter(
        pk__among=Param("ids"), is_active=True, table_id=Param("table_id")
    ).values_list("pk", "credential")
)


def valid_stations(wanted: dict[int, str], table_id: int | None = None) -> set[int]:
    """Of ``{station id: credential hash}``, the stations still active with that hash (the
    session check of tablehub/session_guard.py), and still at table ``table_id`` when it is
    given (a station that moved to another table of its stadium plays there)."""
    if table_id is None:
        active = Station.objects.filter(pk__among=wanted, is_active=True)
        rows = list(active.values_list("pk", "credential"))
    else:
        rows = _ACTIVE_AT_TABLE.list(ids=wanted, table_id=table_id)
    return {pk for pk, credential in rows if wanted[pk] == credential}


def table_info(table: Table, config: TableConfig) -> dict[str, Any]:
    """The table's set-up a station draws itself with (the round's configuration when a
    round is shown, else the table's current one)."""
    probe = Round(table=table, config=config)  # never saved: only to read the timers
    return {
        "table_id": table.pk,
        "table": table.name,
        "mode": table.mode,
        "play": config.play,  # common draw, or seat mode (docs/protocol.md, "Seat mode")
        "currency": table.currency,
        # a station may tip the dealer (docs/protocol.md, ``tip``)
        "tips": table.mode == Table.Mode.DEALER and table.jurisdiction.tips_allowed,
        "boxes": table.boxes,
        "chips": [fmt(chip) for chip in map(_decimal, config.chips) if chip and chip > 0],
        "special_bets": config.offered_special_bets(),
        "limits": limits_shown(config),
        "win_thresholds": {k: str(v) for k, v in config.win_thresholds.items()},
        "timers": {name: writer.timer_seconds(probe, phase) for name, phase in TIMED_STEPS.items()},
        "rules": config.ruleset().to_dict(),
        "paytables": paytables_shown(config),
        "rtp": returns_to_player(config),
        "max_win": max_wins(
            config.ruleset(),
            {"main": config.limit("main"), **config.special_limits()},
            config.paytables(),
        ),
    }


def limits_shown(config: TableConfig) -> dict[str, list[str]]:
    """The configuration's limits as a station shows them: ``[minimum, maximum]`` money
    strings per kind of bet (``main``, ``special``, ``let_it_play``, a special bet's own)."""
    return {
        kind: [fmt(Decimal(str(low))), fmt(Decimal(str(high)))]
        for kind, (low, high) in config.limits.items()
        if low is not None and high is not None
    }


def returns_to_player(config: TableConfig) -> dict[str, str]:
    """Each offered special bet's return to player under this configuration (its exact par
    sheet, payouts/rtp.py, cached), a fraction with four places ("0.9538"); a bet whose
    sheet cannot be made is left out."""
    rules = config.ruleset()
    shown = {}
    for code in config.offered_special_bets():
        try:
            sheet = special_sheet(code, config.special_bets[code], rules)
        except EngineError:
            continue
        shown[code] = f"{sheet['rtp']:.4f}"
    return shown


def paytables_shown(config: TableConfig) -> dict[str, dict[str, Any]]:
    """Each offered special bet's paytable, in the catalog's order: combination -> "pays N
    to 1" as a decimal string (In For 6's hard-6 codes: a list of three, one per pick)."""
    paytables = config.paytables()
    return {
        code: {
            combination: [str(p) for p in pays] if isinstance(pays, tuple) else str(pays)
            for combination, pays in paytables[code].items()
        }
        for code in config.offered_special_bets()
    }


def classify_win(staked: Decimal, returned: Decimal, thresholds: dict[str, Any]) -> str | None:
    """A round's win: "big" when returned / staked >= thresholds["big"], else "nice" when it is
    >= thresholds["nice"], else "regular" when the round returned more than it staked; None
    for no win (a loss, a push, or a return below the stakes, e.g. a surrender or a side bet
    that paid less than the round cost: never celebrated as a win)."""
    if staked <= 0 or returned <= staked:
        return None
    ratio = returned / staked
    big, nice = _decimal(thresholds.get("big")), _decimal(thresholds.get("nice"))
    if big is not None and ratio >= big:
        return "big"
    if nice is not None and ratio >= nice:
        return "nice"
    return "regular"


def _decimal(value: Any) -> Decimal | None:
    """A configured number (chip, threshold) as a Decimal; None when it is not one, so that a
    bad value in a configuration hides one chip or threshold instead of every state."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float, Decimal)):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def player_history(station: Station, limit: int = HISTORY) -> list[dict[str, Any]]:
    """The station's last ``limit`` settled rounds with a bet, newest first: every stake the
    round took (bets, doubles, splits, insurance) and everything it paid back."""
    numbers = dict(
        Round.objects.filter(
            table_id=station.table_id, phase=Round.Phase.SETTLED, bets__station=station
        )
        .order_by("-pk")
        .values_list("pk", "number")
        .distinct()[:limit]
    )
    round_ids = list(numbers)  # newest first: a dict keeps the query's order
    staked: dict[int, Decimal] = defaultdict(lambda: ZERO)
    returned: dict[int, Decimal] = defaultdict(lambda: ZERO)
    rows = (
        LedgerEntry.objects.filter(station=station, round_id__in=round_ids)
        .values("round_id", "kind")
        .annotate(total=Sum("amount"))
    )
    for row in rows:
        if row["kind"] == LedgerEntry.Kind.STAKE:
            staked[row["round_id"]] -= row["total"]
        elif row["kind"] in (LedgerEntry.Kind.RETURN, LedgerEntry.Kind.REFUND):
            returned[row["round_id"]] += row["total"]
    return [
        {
            "round": pk,
            "number": numbers[pk],
            "staked": fmt(staked[pk]),
            "returned": fmt(returned[pk]),
            "net": fmt(returned[pk] - staked[pk]),
        }
        for pk in round_ids
    ]


def last_result(history: list[dict[str, Any]]) -> dict[str, Any]:
    """``last_round``, ``last_bet``, ``last_win`` and ``win`` from the newest history entry;
    the win is classified by the thresholds of the configuration that round was played under."""
    if not history:
        return {"last_round": None, "last_bet": None, "last_win": None, "win": None}
    last = history[0]
    thresholds = (
        Round.objects.filter(pk=last["round"])
        .values_list("config__win_thresholds", flat=True)
        .first()
    )
    win = classify_win(Decimal(last["staked"]), Decimal(last["returned"]), thresholds or {})
    return {
        "last_round": last["round"],
        "last_bet": last["staked"],
        "last_win": last["returned"],
        "win": win,
    }


def dealer_history(table: Table, limit: int = HISTORY) -> list[dict[str, Any]]:
    """The dealer's hand in the table's last ``limit`` settled rounds, newest first:
    ``total``, ``bust``, ``blackjack`` (no cards: a history is for trends)."""
    rounds = list(
        Round.objects.filter(table=table, phase=Round.Phase.SETTLED)
        .select_related("config", "table")
        .order_by("-pk")[:limit]
    )
    outcomes = dealer_outcomes(rounds)
    return [
        {"round": r.pk, "number": r.number, **outcomes[r.pk]} for r in rounds if r.pk in outcomes
    ]


def dealer_stats(history: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over a dealer history: busts (and their share, a whole percent), blackjacks,
    each final total from 17 to 21 (a two-card 21 counts as a blackjack, not a 21) and the
    hands that stopped below 17 (the dealer stops early when no player hand is left)."""
    rounds = len(history)
    busts = sum(1 for h in history if h["bust"])
    blackjacks = sum(1 for h in history if h["blackjack"])
    totals = {str(t): 0 for t in range(17, 22)}
    under_17 = 0
    for h in history:
        if h["bust"] or h["blackjack"]:
            continue
        if h["total"] < 17:
            under_17 += 1
        elif str(h["total"]) in totals:
            totals[str(h["total"])] += 1
    return {
        "rounds": rounds,
        "bust": busts,
        "bust_percent": round(100 * busts / rounds) if rounds else 0,
        "blackjack": blackjacks,
        "totals": totals,
        "under_17": under_17,
    }
