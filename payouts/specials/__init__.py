"""Special bets: evaluators, the bet catalogue, paytables, placement rules and par sheets.

Pure Python, no Django: the rules engine settles special bets through it, and
the par-sheet command and the admin read the same code.
"""

from .catalog import BETS, BetSpec, Cards, SettleAt, hits
from .paytable import Paytable, paid_combination, parse_paytable, returned
from .placement import check_placement

__all__ = [
    "BETS",
    "BetSpec",
    "Cards",
    "Paytable",
    "SettleAt",
    "check_placement",
    "hits",
    "paid_combination",
    "parse_paytable",
    "returned",
]
