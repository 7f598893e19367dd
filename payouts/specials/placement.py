"""Placement rules for special bets (spec/special-bets.md, seeds 001 §3.1 and 003).

Checked when bets close, before any stake is taken; each refusal names the
station, the box and the rule.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from decimal import Decimal

from rounds.engine.errors import EngineError
from rounds.engine.money import check_stake_limits
from rounds.engine.specials import PlacedBet

from .catalog import BETS
from .paytable import Paytable

MAX_SPECIAL_BETS_PER_BOX = 9
Limits = tuple[Decimal, Decimal] | None


def check_placement(
    bets: Iterable[PlacedBet],
    special_without_main: int,
    paytables: Mapping[str, Paytable],
    limits: Limits | Mapping[str, Limits] = None,
) -> None:
    """Refuse the first special bet that breaks a placement rule. ``limits``: one
    [minimum, maximum] for every special bet, or one per bet code."""
    bets = list(bets)
    main = {(b.station, b.box): b.stake for b in bets if b.code == "main"}
    main_total: defaultdict[str, Decimal] = defaultdict(Decimal)
    for (station, _), stake in main.items():
        main_total[station] += stake
    codes = {(b.station, b.box, b.code) for b in bets}
    per_box: Counter[tuple[str, int]] = Counter()
    for bet in bets:
        if bet.code == "main":
            continue
        where = (bet.station, bet.box)
        spec = BETS.get(bet.code)
        if spec is None:
            raise EngineError(f"unknown bet code {bet.code!r}", *where, code="unknown_bet")
        if bet.code not in paytables:
            raise EngineError(
                f"special bet {bet.code!r} is not offered at this table",
                *where,
                code="special_not_offered",
            )
        per_box[where] += 1
        if per_box[where] > MAX_SPECIAL_BETS_PER_BOX:
            raise EngineError(
                f"at most {MAX_SPECIAL_BETS_PER_BOX} special bets per box",
                *where,
                code="too_many_special_bets",
            )
        own_main = main.get(where)
        if own_main is None and (spec.needs_main or special_without_main == 0):
            # 7s and bust always need one (needs_main_bet); any other special bet only at a
            # table with special_without_main 0 (special_needs_main).
            raise EngineError(
                f"{bet.code} needs a main bet on this box",
                *where,
                code="needs_main_bet" if spec.needs_main else "special_needs_main",
            )
        if bet.code == "top_21+3" and (bet.station, bet.box, "21+3") not in codes:
            raise EngineError(
                "top_21+3 needs a 21+3 bet on the same box",
                *where,
                code="top_needs_twenty_one_plus_three",
            )
        if bet.code == "bust":
            if bet.stake > main_total[bet.station]:
                raise EngineError(
                    f"bust stake {bet.stake} is above the sum of the main stakes "
                    f"{main_total[bet.station]}",
                    *where,
                    code="bust_above_main",
                )
        elif special_without_main == 2 and own_main is not None and bet.stake > own_main:
            raise EngineError(
                f"{bet.code} stake {bet.stake} is above the main stake {own_main} of its box",
                *where,
                code="special_above_main",
            )
        limit = limits.get(bet.code) if isinstance(limits, Mapping) else limits
        check_stake_limits(bet.code, bet.stake, limit, *where)
