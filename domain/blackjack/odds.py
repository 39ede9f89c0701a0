"""How often at least one of a player's blackjack bets in one round wins (rules.md 9,
the surebet rule), under basic strategy.

Blackjack's boxes are played against one dealer hand, so their results hang together
and no closed form gives the chance; `benchmarks/bench_blackjack_surebet.py` plays
100,000 rounds of each combination (two decks, the game's rules and its basic
strategy) and this table keeps the upper end of each share's 95% interval, in basis
points (seed 2024). The most a player can hedge with, five boxes and insurance on each against an
ace, wins together about 78% of the time: no combination is a surebet, so a bonus may
be staked on any of them.
"""

from __future__ import annotations

from fractions import Fraction

from domain.blackjack.hands import BOXES_MAX

BASIS_POINTS = 10_000
# (boxes, insured) -> the chance at least one bet wins, upper end of 95%, basis points.
_CHANCE_UPPER_BASIS_POINTS = {
    (1, False): 4414,
    (1, True): 4656,
    (2, False): 5870,
    (2, True): 6094,
    (3, False): 6672,
    (3, True): 6919,
    (4, False): 7240,
    (4, True): 7450,
    (5, False): 7609,
    (5, True): 7821,
}


def chance_any_wins(boxes: int, insured: bool) -> Fraction:
    """The chance (an upper bound) that at least one of `boxes` boxes, with insurance on
    them when `insured`, wins a round; no boxes, none."""
    if boxes == 0:
        return Fraction(0)
    assert 1 <= boxes <= BOXES_MAX, boxes
    return Fraction(_CHANCE_UPPER_BASIS_POINTS[(boxes, insured)], BASIS_POINTS)
