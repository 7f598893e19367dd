"""Par-sheet speed: every special bet's exact par sheet for 8 decks, default paytables.

    .venv/bin/python bench/parsheet.py [--decks 8] [--repeat 3]

Prints the best and the worst of ``--repeat`` timings of each bet (in-process,
no Django start-up) and the slowest bet. Target: any three-card bet (P1 P2 D)
under 2 seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from payouts.specials import BETS, Cards  # noqa: E402
from payouts.specials.defaults import default_paytable  # noqa: E402
from payouts.specials.parsheet import special_parsheet  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    worst_three_card = ("", 0.0)
    for code, spec in BETS.items():
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            sheet = special_parsheet(code, args.decks, default_paytable(code))
            times.append(time.perf_counter() - start)
        print(
            f"{code:20s} {spec.cards.value:20s} best {min(times):6.3f} s  worst {max(times):6.3f} s"
            f"  rtp {sheet['rtp']:.6f}"
        )
        if spec.cards is Cards.PLAYER_UP and max(times) > worst_three_card[1]:
            worst_three_card = (code, max(times))
    print(
        f"slowest three-card bet: {worst_three_card[0]} {worst_three_card[1]:.3f} s (target < 2 s)"
    )


if __name__ == "__main__":
    main()
