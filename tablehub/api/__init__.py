"""The REST API (``/api/``): tables and their status, configuration versions, rounds and game
recall, station histories and ledgers, par sheets and reports. docs/operations.md, "API"."""
