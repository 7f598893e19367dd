"""Special-bet settlement speed: a 200-station, 3-box round with 9 special bets per box.

    .venv/bin/python bench/specials.py [--rounds 100] [--stations 200]

Every station bets the main game and 9 special bets on each of the 3 boxes
(5,400 special bets, two of them settled at the end of the round: lucky_aces
and bust). The clock runs only inside the engine's special-bet settlement
(after the deal, and at the end); median and p99 per round, in this one run.
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

from payouts.specials import Paytables  # noqa: E402
from payouts.specials.defaults import default_paytable  # noqa: E402
from rounds.engine import ALL_CARDS, Bet, CardDrawn, Round, RuleSet, Timeout  # noqa: E402
from rounds.engine.round import BonusAssigned  # noqa: E402

CODES = [
    "21+3",
    "top_21+3",
    "lucky_lucky",
    "c3",
    "lucky_ladies",
    "pair",
    "match",
    "lucky_aces",
    "bust",
]
PAYTABLES = Paytables({code: default_paytable(code) for code in CODES})


class ClockedRound(Round):
    """A round that adds up the CPU time of its special-bet settlement. (A subclass, not a
    patched method on the instance: that would make every round a reference cycle, left
    for the garbage collector to find inside a later settlement.)"""

    spent = 0.0

    def _settle_specials(self, at):
        start = time.process_time()
        super()._settle_specials(at)
        self.spent += time.process_time() - start


def timed_round(stations: int, rng: random.Random) -> float:
    bets, credits = [], {}
    for n in range(stations):
        name = f"st{n:03d}"
        credits[name] = Decimal("10000")
        for box in (1, 2, 3):
            bets.append(Bet(name, box, "main", Decimal("10")))
            bets += [Bet(name, box, code, Decimal("1")) for code in CODES]
    shoe = [c for c in ALL_CARDS for _ in range(8)]
    rng.shuffle(shoe)
    cards = iter(shoe)
    rnd = ClockedRound(RuleSet(), bets, credits, boxes=3, paytables=PAYTABLES)
    while not rnd.settled:
        if rnd.awaiting_card:
            rnd.apply(CardDrawn(next(cards)))
        elif rnd.awaiting_bonus:
            for station, box, (first, second, third) in rnd.awaiting_bonus:
                rnd.apply(BonusAssigned(station, box, (first, second, third)))
        else:
            rnd.apply(Timeout())
    return rnd.spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--stations", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(1)
    times = sorted(timed_round(args.stations, rng) for _ in range(args.rounds))
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"{args.stations} stations x 3 boxes x {len(CODES)} special bets, {args.rounds} rounds")
    print(
        f"settlement CPU per round: median {statistics.median(times) * 1000:.2f} ms, "
        f"p99 {p99 * 1000:.2f} ms, max {times[-1] * 1000:.2f} ms (target well under 20 ms)"
    )


if __name__ == "__main__":
    main()
