"""The round.

Owns the rules engine in `rounds/engine/` (pure Python, no Django imports,
deterministic: a RuleSet, the bets and a stream of events in, the new state
and what to tell whom out), the Round model with its append-only event log
(RoundEvent) from which any round is rebuilt by one replay (`rounds/replay.py`), and
the round writer (`rounds/writer.py`), the only code that appends to that log
(docs/round-core.md).
"""
