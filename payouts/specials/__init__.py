"""Special bets: evaluators, the bet catalogue, paytables, placement rules and par sheets.

Pure Python, no Django, no app's models: built on the rules engine's primitives
(cards, money, errors, the ``SettleAt`` moments and the protocols of rounds/engine/
specials.py). The engine settles special bets through the ``Paytables`` its caller
passes it, and the par-sheet command and the admin read the same code.
"""

from .catalog import BETS, BetSpec, Cards, SettleAt, hits
from .offer import Paytables, parse_paytables
from .paytable import Paytable, paid_combination, parse_paytable, returned
from .placement import check_placement

__all__ = [
    "BETS",
    "BetSpec",
    "Cards",
    "Paytable",
    "Paytables",
    "SettleAt",
    "check_placement",
    "hits",
    "paid_combination",
    "parse_paytable",
    "parse_paytables",
    "returned",
]
