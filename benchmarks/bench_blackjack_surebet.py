"""How often at least one of a player's blackjack bets in a round wins (rules.md 9, the
surebet rule), under basic strategy, by simulation.

Usage: python benchmarks/bench_blackjack_surebet.py [rounds] [--seed N]   (default 200,000)

For 1 to 5 boxes, with and without insurance on every box when the dealer shows an ace
(the most a player can hedge with in one round), the share of rounds in which at least
one box (any of its hands, after a split) or one insurance bet wins, with the upper end
of its 95% interval. `domain/blackjack/odds.py` keeps these upper ends; docs/rules.md 9
shows them. The play is `bench_blackjack_sim.py`'s (basic strategy, the game's rules).
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Iterator

from benchmarks.bench_blackjack_sim import (
    SEED_DEFAULT,
    SHOE,
    STAKE_CENTS,
    Z_95,
    _awaits_dealer,
    _column,
    _play_box,
)
from domain.blackjack.hands import dealer_needs_card, is_ace, is_blackjack, settle_hand
from domain.blackjack.play import deal_order
from domain.blackjack.state import DEALER

ROUNDS_DEFAULT = 200_000
BOXES_MAX = 5


def any_wins(shoe: list[str], boxes: int, insured: bool) -> bool:
    """Whether at least one of the bets wins in a round dealt from this shoe."""
    slots = deal_order(list(range(1, boxes + 1)))
    dealer = [shoe[slot.shoe_index] for slot in slots if slot.box_number == DEALER]
    players = [
        [shoe[slot.shoe_index] for slot in slots if slot.box_number == box]
        for box in range(1, boxes + 1)
    ]
    draw: Iterator[str] = iter(shoe[len(slots) :])
    dealer_blackjack = is_blackjack(dealer, split=False)
    if insured and is_ace(dealer[0]) and dealer_blackjack:
        return True  # insurance pays
    if dealer_blackjack:
        return False  # a player blackjack pushes; everything else loses
    column = _column(dealer[0])
    played = [_play_box(cards, column, draw) for cards in players]
    hands = [hand for box in played for hand in box]
    if any(_awaits_dealer(cards, split) for cards, split, _ in hands):
        while dealer_needs_card(dealer):
            dealer.append(next(draw))
    return any(
        settle_hand(cards, STAKE_CENTS, split=split, dealer_cards=dealer) > 0
        for cards, split, _ in hands
    )


def run(rounds: int, seed: int = SEED_DEFAULT) -> dict[str, tuple[float, float]]:
    """(share, upper end of its 95% interval) for each combination of bets."""
    rng = random.Random(seed)
    shoe = list(SHOE)
    results = {}
    for boxes in range(1, BOXES_MAX + 1):
        for insured in (False, True):
            wins = 0
            for _ in range(rounds):
                rng.shuffle(shoe)
                wins += any_wins(shoe, boxes, insured)
            share = wins / rounds
            upper = share + Z_95 * math.sqrt(share * (1 - share) / rounds)
            results[f"{boxes} box{'es' if boxes > 1 else ''}{' + insurance' * insured}"] = (
                share,
                upper,
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=ROUNDS_DEFAULT)
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT)
    arguments = parser.parse_args()
    for name, (share, upper) in run(arguments.rounds, arguments.seed).items():
        print(f"{name}: {share:.4%} (95% upper end {upper:.4%})")


if __name__ == "__main__":
    main()
