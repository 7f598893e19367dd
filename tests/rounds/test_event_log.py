"""Every golden round played through the round services (event log, ledger, results rows):
the outcome read back from the database equals the golden outcome, the round rebuilds from
its RoundEvent rows alone, and the ledger balances."""

import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.db.models import Sum

from payouts.ledger import balance
from payouts.maingame import abandoned
from payouts.models import LedgerEntry
from payouts.specials import parse_paytables
from payouts.specials.bonus import fixed_bonus
from rounds import writer
from rounds.engine.scenario import drive, parse_scenario
from rounds.live_replay import jsonable
from rounds.models import Round
from rounds.replay import catch_up, rebuild, replay
from rounds.selectors import round_outcome
from stations import seats
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Play, Table, TableConfig

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
GOLDEN = sorted(p for p in SCENARIOS.glob("*.json") if not p.name.endswith(".expected.json"))


def set_up_table(data, scenario):
    seating = scenario.seating  # seat mode: the seats taken and the follow choices set
    jurisdiction = Jurisdiction.objects.create(
        code="test",
        name="Test",
        special_bets_behind=sorted(seating.behind_special_bets) if seating else [],
    )
    table = Table.objects.create(name="golden", jurisdiction=jurisdiction, boxes=scenario.boxes)
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=scenario.rules.to_dict(),
        limits=jsonable(data.get("limits", {})),
        special_bets=jsonable(data.get("special_bets", {})),
        play=Play.SEAT if seating else Play.COMMON_DRAW,
        behind_cap=seating.behind_cap if seating else None,
    )
    stations = []
    for name, credits in scenario.credits.items():
        station = Station.objects.create(table=table, name=name)
        if credits > 0:
            cash_in(station, credits, key="start")
        stations.append(station)
    by_name = {s.name: s for s in stations}
    for box, name in sorted(seating.seats.items()) if seating else ():
        seats.take_seat(by_name[name], box)
    for name in seating.follow if seating else ():
        seats.set_follow(by_name[name], True)
    return table, stations


@pytest.mark.django_db
@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_round_through_the_services(path):
    data = json.loads(path.read_text(), parse_float=Decimal)
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    scenario = parse_scenario(data, parse_paytables)
    table, stations = set_up_table(data, scenario)
    by_name = {s.name: s for s in stations}
    round = writer.open_round(table)
    for name, station in by_name.items():  # each station's bets as one group, as a slip
        place_bets(station, [(b.box, b.code, b.stake) for b in scenario.bets if b.station == name])
    writer.close_bets(round.pk)
    with fixed_bonus(scenario.bonus):  # the scenario's bonus through the secure RNG's seam
        used = drive(
            scenario,
            lambda: writer.state(round.pk),
            lambda event: writer.record(round.pk, event),
            abandoned.for_scenario(scenario),  # an abandoned hand: as the table's timer plays it
        )

    round.refresh_from_db()
    assert round.phase == Round.Phase.SETTLED
    outcome = round_outcome(round, stations)
    outcome["unused"] = [str(c) for c in scenario.shoe[used:]]
    assert outcome == expected

    writer.forget_cached_engines()  # nothing but the rows
    rebuilt = rebuild(round)
    for station in stations:
        if station.name not in rebuilt.seats:  # no bet, so not in the round (a seat left idle)
            assert expected["stations"][station.name]["hands"] == []
            continue
        settlement = rebuilt.settlement(station.name)
        assert settlement["hands"] == expected["stations"][station.name]["hands"]
        assert settlement["credits"] == expected["stations"][station.name]["credits"]

    # An engine caught up from any event (another process wrote the rest) is the whole
    # replay's: nine points from just after the bets closed to the last event.
    rows = list(round.events.order_by("seq"))
    for k in sorted({1 + (len(rows) - 1) * i // 8 for i in range(9)}):
        engine = replay(round, rows[:k])
        assert engine is not None and catch_up(engine, rows[k:]), k
        assert engine.public_view() == rebuilt.public_view(), k
        for name in rebuilt.seats:
            assert engine.settlement(name) == rebuilt.settlement(name), (k, name)

    assert LedgerEntry.objects.aggregate(total=Sum("amount"))["total"] == 0
    house = LedgerEntry.objects.filter(round=round, station=None).aggregate(t=Sum("amount"))["t"]
    players = LedgerEntry.objects.filter(round=round).exclude(station=None)
    assert house == -players.aggregate(t=Sum("amount"))["t"]  # each round balances vs the house


SEAT_GOLDEN = [p for p in GOLDEN if json.loads(p.read_text()).get("mode") == "seat"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", SEAT_GOLDEN, ids=[p.stem for p in SEAT_GOLDEN])
def test_seat_mode_ledger_follows_every_input(path):
    """In seat mode a seat's double or split stakes the bets behind it that follow: after
    every input, each station's credits in the ledger are the engine's, to the cent (not
    only once the round settles)."""
    data = json.loads(path.read_text(), parse_float=Decimal)
    scenario = parse_scenario(data, parse_paytables)
    table, stations = set_up_table(data, scenario)
    by_name = {s.name: s for s in stations}
    round = writer.open_round(table)
    for name, station in by_name.items():
        place_bets(station, [(b.box, b.code, b.stake) for b in scenario.bets if b.station == name])
    writer.close_bets(round.pk)
    seen = []

    def record(event):
        writer.record(round.pk, event)
        credits = writer.read(round.pk, lambda e: {n: s.credits for n, s in e.seats.items()})
        ledger = {n: balance(by_name[n]) for n in credits}
        assert ledger == credits, f"after {event!r}"
        seen.append(event)

    with fixed_bonus(scenario.bonus):
        drive(
            scenario,
            lambda: writer.state(round.pk),
            record,
            abandoned.for_scenario(scenario),
        )
    assert seen
