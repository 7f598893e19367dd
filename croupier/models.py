"""Models of the croupier app (none yet)."""
