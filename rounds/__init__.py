"""The round.

Owns the rules engine in `rounds/engine/` (pure Python, no Django imports,
deterministic: a RuleSet, the bets and a stream of events in, the new state
and what to tell whom out), the Round model with its append-only event log
(RoundEvent) from which any round can be rebuilt, and the round services that
apply one event at a time under `select_for_update`.
"""
