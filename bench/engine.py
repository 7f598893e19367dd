"""Engine speed: whole rounds of a 3-box, 200-station table with random decisions.

    .venv/bin/python bench/engine.py [--rounds 300] [--stations 200] [--seed 1]

Each station bets on one to three boxes and answers every question with a
random allowed decision (or lets the timer run out); the shoe is a fresh
8-deck shuffle per round. Prints rounds per second and the CPU time of one
whole round (median, p99, max), measured in this one run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rounds.engine import ALL_CARDS, Bet, CardDrawn, Decision, Round, RuleSet, Timeout  # noqa: E402


def play_round(rules: RuleSet, stations: int, rng: random.Random) -> tuple[int, float]:
    """Play one round; return (events applied, CPU seconds from closing bets to settlement).

    The shuffle and the bets are made before the clock starts; the random decisions
    of the stations are made inside it, as the live table's stations would."""
    bets, credits = [], {}
    for n in range(stations):
        name = f"st{n:03d}"
        credits[name] = Decimal("1000.00")
        for box in rng.sample([1, 2, 3], rng.randint(1, 3)):
            bets.append(Bet(name, box, "main", Decimal(rng.choice(["5", "10", "25"]))))
    shoe = [c for c in ALL_CARDS for _ in range(rules.decks)]
    rng.shuffle(shoe)
    cards = iter(shoe)
    start = time.process_time()
    rnd = Round(rules, bets, credits, boxes=3)
    events = notices = 0
    while not rnd.settled:
        if rnd.awaiting_card is not None:
            notices += len(rnd.apply(CardDrawn(next(cards))))
            events += 1
            continue
        for station in rnd.prompted_stations:
            prompt = rnd.prompt_for(station)
            assert prompt is not None  # a prompted station has its question
            allowed = prompt["allowed"]
            choice = rng.choice(allowed + ["timeout"])
            event = Timeout(station) if choice == "timeout" else Decision(station, choice)
            notices += len(rnd.apply(event))
            events += 1
    return events, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--stations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rules = RuleSet()
    times, events = [], []
    wall = time.perf_counter()
    for _ in range(args.rounds):
        n_events, seconds = play_round(rules, args.stations, rng)
        times.append(seconds)
        events.append(n_events)
    wall = time.perf_counter() - wall
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"table: 3 boxes, {args.stations} stations, default rules, {args.rounds} rounds")
    print(f"rounds per second (wall): {args.rounds / wall:.1f}")
    print(f"events per round (median): {statistics.median(events):.0f}")
    print(
        f"CPU per round: median {statistics.median(times) * 1000:.2f} ms, "
        f"p99 {p99 * 1000:.2f} ms, max {times[-1] * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
