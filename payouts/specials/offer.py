"""What a table offers: its special bets' paytables, by bet code, with the placement rules.

``Paytables`` is what the rules engine is given (``Round(..., paytables)``; rounds/engine/
specials.py, ``SpecialBets``): the live table's configuration (``TableConfig.paytables``)
and the scenario files (``parse_paytables``) both make one, so the engine settles and
places special bets through this catalogue without importing it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rounds.engine.errors import EngineError
from rounds.engine.specials import PlacedBet, SpecialLimits

from .paytable import Paytable, parse_paytable
from .placement import check_placement


class Paytables(dict[str, Paytable]):
    """The special bets a table offers: bet code -> its paytable (parse_paytable's)."""

    def check_placement(
        self,
        bets: Iterable[PlacedBet],
        special_without_main: int,
        limits: SpecialLimits = None,
    ) -> None:
        """Refuse the first special bet that breaks a placement rule (placement.py)."""
        check_placement(bets, special_without_main, self, limits)


def parse_paytables(data: object, where: str = "special_bets") -> Paytables:
    """Validate the special bets offered, bet code -> paytable; None offers none."""
    if data is None:
        return Paytables()
    if not isinstance(data, dict):
        raise EngineError(f"{where} must be an object of bet code -> paytable")
    return Paytables({code: parse_paytable(code, table, where) for code, table in data.items()})
