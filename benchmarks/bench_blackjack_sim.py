"""Measure the house edge of Blackjack Baden-Baden under basic strategy, by simulation.

Usage: python benchmarks/bench_blackjack_sim.py [rounds] [--seed N]   (default 1,000,000)

One box, one unit staked per round, two decks shuffled with `random.Random` before every
round (a simulation: the provably fair shoe is not needed here). The player follows the
basic strategy below and never takes insurance or even money. Hands are settled by the
same pure rules the game uses (`domain.blackjack`); only the turn bookkeeping is local,
because the JSON play state copies itself at every step and would be far too slow.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Iterator

from domain.blackjack.hands import (
    CHARLIE_CARDS,
    card_points,
    dealer_needs_card,
    hand_value,
    is_ace,
    is_blackjack,
    is_bust,
    is_ten_valued,
    same_rank,
    settle_hand,
)
from domain.blackjack.play import deal_order
from domain.blackjack.state import DEALER

ROUNDS_DEFAULT = 1_000_000
SEED_DEFAULT = 2024
STAKE_CENTS = 100
DECKS = 2
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
# Suits never matter, so the simulated shoe holds ranks only: 4 suits x 2 decks each.
SHOE = [rank for rank in RANKS for _ in range(4 * DECKS)]
Z_95 = 1.959964

# Basic strategy for these rules: 2 decks, dealer stands on soft 17, hard 9-11 doubles
# only, one split without doubling after it, no surrender. The dealer peeks under a ten
# but not under an ace, so against an ace every extra stake risks a blackjack: hard 10
# and 11 and a pair of eights just hit. Columns: dealer up card 2, 3, ..., 9, ten, ace.
# H hit, S stand, D double (hit when doubling is not allowed); for pairs Y splits.
_HARD = {
    **dict.fromkeys(range(4, 9), "HHHHHHHHHH"),
    9: "DDDDDHHHHH",
    10: "DDDDDDDDHH",
    11: "DDDDDDDDDH",
    12: "HHSSSHHHHH",
    **dict.fromkeys(range(13, 17), "SSSSSHHHHH"),
    **dict.fromkeys(range(17, 22), "SSSSSSSSSS"),
}
_SOFT = {
    **dict.fromkeys(range(12, 18), "HHHHHHHHHH"),
    18: "SSSSSSSHHH",
    **dict.fromkeys(range(19, 22), "SSSSSSSSSS"),
}
_PAIRS = {
    "A": "YYYYYYYYYY",
    "9": "YYYYYNYYNN",
    "8": "YYYYYYYYNN",
    "7": "YYYYYYNNNN",
    "6": "YYYYYNNNNN",
    "3": "NNYYYYNNNN",
    "2": "NYYYYYNNNN",
}
# Where each card of a one-box deal goes, from the game's own deal order.
_DEAL = deal_order([1])
_PLAYER_INDEXES = [slot.shoe_index for slot in _DEAL if slot.box_number != DEALER]
_DEALER_INDEXES = [slot.shoe_index for slot in _DEAL if slot.box_number == DEALER]


def _column(up_card: str) -> int:
    """Column of the strategy tables for the dealer's up card: 2 -> 0, ..., ten 8, ace 9."""
    return 9 if is_ace(up_card) else card_points(up_card) - 2


def _wants_split(cards: list[str], column: int) -> bool:
    row = _PAIRS.get(cards[0], "")
    return bool(row) and same_rank(cards[0], cards[1]) and row[column] == "Y"


def _play_hand(cards: list[str], column: int, split: bool, draw: Iterator[str]) -> int:
    """Play one hand by basic strategy; return its stake multiplier (2 after a double)."""
    while len(cards) < CHARLIE_CARDS:
        value = hand_value(cards)
        if value.total > 21:
            break
        table = _SOFT if value.is_soft else _HARD
        move = table[value.total][column]
        if move == "S":
            break
        cards.append(next(draw))
        # A double takes exactly one card; it is only allowed on an unsplit first two.
        if move == "D" and len(cards) == 3 and not split:
            return 2
    return 1


def _awaits_dealer(cards: list[str], split: bool) -> bool:
    decided = is_bust(cards) or len(cards) >= CHARLIE_CARDS or is_blackjack(cards, split)
    return not decided


def play_round(shoe: list[str]) -> tuple[int, int]:
    """(net cents for the player, cents staked, doubles and splits included) in one round
    dealt from an already shuffled shoe."""
    player = [shoe[index] for index in _PLAYER_INDEXES]
    dealer = [shoe[index] for index in _DEALER_INDEXES]
    draw = iter(shoe[len(_DEAL) :])
    # A ten up with a blackjack behind it ends the round; a player blackjack stands.
    dealer_checked = is_ten_valued(dealer[0]) and is_blackjack(dealer, split=False)
    if dealer_checked or is_blackjack(player, split=False):
        return settle_hand(player, STAKE_CENTS, split=False, dealer_cards=dealer), STAKE_CENTS
    hands = _play_box(player, _column(dealer[0]), draw)
    if any(_awaits_dealer(cards, split) for cards, split, _ in hands):
        while dealer_needs_card(dealer):
            dealer.append(next(draw))
    net = sum(
        settle_hand(cards, STAKE_CENTS * multiplier, split=split, dealer_cards=dealer)
        for cards, split, multiplier in hands
    )
    return net, sum(STAKE_CENTS * multiplier for _, _, multiplier in hands)


def _play_box(
    cards: list[str], column: int, draw: Iterator[str]
) -> list[tuple[list[str], bool, int]]:
    if not _wants_split(cards, column):
        return [(cards, False, _play_hand(cards, column, False, draw))]
    hands = [[cards[0], next(draw)], [cards[1], next(draw)]]
    return [(hand, True, _play_hand(hand, column, True, draw)) for hand in hands]


def run(rounds: int, seed: int = SEED_DEFAULT) -> dict[str, float]:
    """Play `rounds` rounds; the house edge is per unit initially staked."""
    assert rounds > 1
    rng = random.Random(seed)
    shoe = list(SHOE)
    net_sum = net_square_sum = staked_sum = 0
    started = time.perf_counter()
    for _ in range(rounds):
        rng.shuffle(shoe)
        net, staked = play_round(shoe)
        net_sum += net
        net_square_sum += net * net
        staked_sum += staked
    seconds = time.perf_counter() - started
    summary = _summary(rounds, net_sum, net_square_sum, seconds)
    # Return to player per unit of everything staked (the RTP report's basis): the
    # theoretical figure of domain/rtp.py.
    summary["return_to_player"] = 1 + net_sum / staked_sum
    return summary


def _summary(rounds: int, net_sum: int, net_square_sum: int, seconds: float) -> dict[str, float]:
    mean = net_sum / rounds / STAKE_CENTS
    variance = (net_square_sum / STAKE_CENTS**2 - rounds * mean * mean) / (rounds - 1)
    half_width = Z_95 * math.sqrt(variance / rounds)
    house_edge = -mean
    return {
        "rounds": rounds,
        "house_edge": house_edge,
        "ci95_low": house_edge - half_width,
        "ci95_high": house_edge + half_width,
        "standard_deviation": math.sqrt(variance),
        "seconds": seconds,
        "rounds_per_second": rounds / seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=ROUNDS_DEFAULT)
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT)
    arguments = parser.parse_args()
    result = run(arguments.rounds, arguments.seed)
    print(
        f"rounds: {result['rounds']:,.0f}\n"
        f"house edge: {result['house_edge']:.4%} per unit staked "
        f"(95% CI {result['ci95_low']:.4%} to {result['ci95_high']:.4%})\n"
        f"return to player: {result['return_to_player']:.4%} of all staked "
        f"(doubles and splits included)\n"
        f"standard deviation per round: {result['standard_deviation']:.4f} units\n"
        f"time: {result['seconds']:.1f} s, {result['rounds_per_second']:,.0f} rounds/s"
    )


if __name__ == "__main__":
    main()
