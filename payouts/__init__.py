"""Money and what a hand pays.

Owns the paytables, the special-bet evaluators, settlement of the main game
and special bets, the credit ledger (Decimal entries, each keyed so it cannot
be written twice) and the par sheets.
"""
