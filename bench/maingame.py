"""The main game's par sheet checked by rounds played through the rules engine.

    .venv/bin/python bench/maingame.py --rules FILE [--rounds 1000000] [--seed 1]

Computes the par sheet for the rules (exact analysis), then plays ``--rounds``
one-box rounds through ``rounds.engine`` with the computed basic-strategy
chart, a fresh shuffle every round, insurance declined, and reports the
measured return with its standard error beside the computed ``rtp``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from payouts.maingame.cache import cached_main_parsheet  # noqa: E402
from payouts.maingame.chart_player import ChartPlayer  # noqa: E402
from rounds.engine import ALL_CARDS, Bet, CardDrawn, Decision, Round, RuleSet  # noqa: E402

STAKE = Decimal("100")


def play(rules: RuleSet, chart: dict, rounds: int, seed: int) -> tuple[float, float]:
    """Mean return per initial bet and its standard error over ``rounds`` engine rounds."""
    player = ChartPlayer(chart)
    rng = random.Random(seed)
    shoe = [c for c in ALL_CARDS for _ in range(rules.decks)]
    total = total_sq = 0.0
    credits = Decimal("100000")
    for _ in range(rounds):
        rnd = Round(rules, [Bet("p", 1, "main", STAKE)], {"p": credits}, boxes=1)
        # A one-box round uses far fewer than 40 cards: shuffling the top 40 positions
        # (Fisher-Yates) gives them a uniformly random order, which is all the round sees.
        for i in range(40):
            j = rng.randrange(i, len(shoe))
            shoe[i], shoe[j] = shoe[j], shoe[i]
        cards = iter(shoe)
        seat = rnd.seats["p"]
        while not rnd.settled:
            if rnd.awaiting_card:
                rnd.apply(CardDrawn(next(cards)))
                continue
            prompt = rnd.prompt_for("p")
            assert prompt is not None  # no card is wanted, so the one station is asked
            hand = seat.prompt if prompt["kind"] == "decision" else seat.hands[0]
            assert hand is not None
            action = player.decide(hand.cards, rnd.dealer[0], prompt, hand.split)
            rnd.apply(Decision("p", action))
        result = float((seat.credits - credits) / STAKE)
        total += result
        total_sq += result * result
    mean = total / rounds
    return mean, math.sqrt(max(total_sq / rounds - mean * mean, 0.0) / rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", required=True)
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rules = RuleSet.from_dict(json.loads(Path(args.rules).read_text()))
    start = time.perf_counter()
    sheet = cached_main_parsheet(rules)
    computed = time.perf_counter() - start
    start = time.perf_counter()
    mean, se = play(rules, sheet["chart"], args.rounds, args.seed)
    played = time.perf_counter() - start
    rtp = sheet["rtp"]
    measured = 1.0 + mean
    print(f"rules: {json.dumps(json.loads(Path(args.rules).read_text()))}")
    print(f"computed rtp (basic strategy): {rtp:.6f}   par sheet in {computed:.1f} s")
    print(f"engine, {args.rounds} rounds:  {measured:.6f} +/- {se:.6f} (1 SE)   in {played:.0f} s")
    print(f"difference: {(measured - rtp) / se:+.2f} standard errors (must be within 3)")


if __name__ == "__main__":
    main()
