"""The dealer's side of the table.

Owns card-scan ingestion from the shoe (the card reader or the virtual shoe,
which speak the same protocol), the dealer's commands and the croupier tablet
views.
"""
