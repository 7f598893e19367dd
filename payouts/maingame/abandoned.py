"""Abandoned hands played by the basic strategy of the table's rules.

Where the jurisdiction asks for it (``Jurisdiction.abandoned_hands``), a station's decision
left unanswered at its deadline is made by the main game's par-sheet chart for the round's
rules (payouts/maingame/parsheet.py, played as ``chart_player.ChartPlayer`` plays it) instead
of the table's timeout action. The decision is an ordinary engine ``Decision`` marked
``automatic``, so the event log, the replay and recall keep it as such. The chart is the
par sheet's for the round's rules, computed once per rule set and cached on disk.
"""

from __future__ import annotations

from typing import Any

from rounds.engine import Decision, RuleSet, parse_card
from rounds.engine import Round as Engine
from rounds.engine.scenario import Abandoned, Scenario

from .cache import cached_main_parsheet
from .chart_player import ChartPlayer

TIMEOUT = "timeout"  # the table's timeout action (rules.timeout_action): the default
BASIC_STRATEGY = "basic_strategy"
RULES = (TIMEOUT, BASIC_STRATEGY)

Chart = dict[str, dict[str, dict[str, str]]]


def automatic_decision(engine: Engine, station: str, chart: Chart) -> Decision | None:
    """The chart's answer to the station's open play decision (None: it is asked no play
    decision now; insurance, even money and the bonus pick keep the table's timeout)."""
    prompt: dict[str, Any] | None = engine.prompt_for(station)
    if prompt is None or prompt["kind"] != "decision" or not engine.dealer:
        return None
    hands = engine.station_view(station)["station"]["hands"]
    hand = next(h for h in hands if h["id"] == prompt["hand"])
    cards = [parse_card(c) for c in hand["cards"]]
    split = sum(1 for h in hands if h["box"] == hand["box"]) > 1
    action = ChartPlayer(chart).decide(cards, engine.dealer[0], prompt, split=split)
    return Decision(station, action, prompt["hand"], automatic=True)


def chart_for(rules: RuleSet) -> Chart:
    """The basic-strategy chart of ``rules``: the par sheet's, computed once per rule set and
    then read from its cache (payouts/maingame/cache.py)."""
    return cached_main_parsheet(rules)["chart"]


def for_scenario(scenario: Scenario) -> Abandoned | None:
    """``play_scenario``'s abandoned hands: the chart of the scenario's rules, as the live
    table plays them (None: the scenario keeps the timeout action)."""
    if scenario.abandoned_hands != BASIC_STRATEGY:
        return None
    chart = chart_for(scenario.rules)
    return lambda engine, station: automatic_decision(engine, station, chart)
