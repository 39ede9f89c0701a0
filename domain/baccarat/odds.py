"""Exact baccarat odds by full enumeration of the shoe, without replacement.

Only card values matter, so the shoe is ten piles: 16 cards of value 0 and
4 of each value 1-9 per deck. Every coup is enumerated as a sequence of card
values weighted by how many cards of each value were left when it was drawn.
A coup that ends after 4 or 5 cards is counted as if the unused positions
were filled by any of the remaining cards, so every weight is over the same
denominator: the number of ordered draws of 6 cards from the shoe. Integer
weights keep the sums exact and fast; Fractions appear only at the end.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from domain.baccarat.rules import (
    BANKER_PAYS_DENOMINATOR,
    BANKER_PAYS_NUMERATOR,
    banker_draws,
    is_natural,
    player_draws,
)
from domain.cards import DECKS_MAX

_VALUE_ZERO_PER_DECK = 16
_VALUE_OTHER_PER_DECK = 4
_CARDS_PER_COUP_MAX = 6
_VALUES = range(10)


@dataclass(frozen=True, slots=True)
class BaccaratOdds:
    """Probabilities of each outcome and the house edge of each bet (per unit staked)."""

    decks: int
    tie_pays: int
    player: Fraction
    banker: Fraction
    tie: Fraction
    house_edge_player: Fraction
    house_edge_banker: Fraction
    house_edge_tie: Fraction


def exact_odds(decks: int, tie_pays: int) -> BaccaratOdds:
    """Enumerate every coup of a fresh shoe of `decks` decks; tie bets pay `tie_pays` to 1."""
    if not 1 <= decks <= DECKS_MAX:
        raise ValueError(f"a shoe holds 1 to {DECKS_MAX} decks, not {decks}")
    if tie_pays < 1:
        raise ValueError(f"a tie pays at least 1 to 1, not {tie_pays} to 1")
    player, banker, tie = (Fraction(weight, _draws_total(decks)) for weight in _weights(decks))
    assert player + banker + tie == 1
    return BaccaratOdds(
        decks=decks,
        tie_pays=tie_pays,
        player=player,
        banker=banker,
        tie=tie,
        # Edge = minus the expected net per unit staked; ties push player and banker bets.
        house_edge_player=banker - player,
        house_edge_banker=player - banker * BANKER_PAYS_NUMERATOR / BANKER_PAYS_DENOMINATOR,
        house_edge_tie=1 - tie * (tie_pays + 1),
    )


@functools.lru_cache(maxsize=DECKS_MAX)
def _outcome_chances(decks: int) -> dict[str, Fraction]:
    odds = exact_odds(decks, tie_pays=1)  # the tie payout plays no part in who wins
    return {"player": odds.player, "banker": odds.banker, "tie": odds.tie}


def chance_any_wins(spots: Iterable[str], decks: int) -> Fraction:
    """The chance that at least one of these spots wins a coup of a fresh shoe (rules.md
    9, the surebet rule): each spot wins on its own outcome, so the chances add up.
    Player and Banker together: 90.5% with eight decks; all three: 1."""
    chances = _outcome_chances(decks)
    return sum((chances[spot] for spot in set(spots)), Fraction(0))


def _pile_sizes(decks: int) -> list[int]:
    return [_VALUE_ZERO_PER_DECK * decks] + [_VALUE_OTHER_PER_DECK * decks] * 9


def _draws_total(decks: int) -> int:
    """Ordered draws of 6 cards from the shoe: the common denominator of every weight."""
    cards = sum(_pile_sizes(decks))
    total = 1
    for drawn in range(_CARDS_PER_COUP_MAX):
        total *= cards - drawn
    return total


def _weights(decks: int) -> tuple[int, int, int]:
    """Weights of (player wins, banker wins, tie) over `_draws_total(decks)`."""
    piles = _pile_sizes(decks)
    cards = sum(piles)
    weights = [0, 0, 0]
    for first_four, weight in _first_four_draws(piles):
        player_first, banker_first, player_second, banker_second = first_four
        for pile in first_four:
            piles[pile] -= 1
        player_total = (player_first + player_second) % 10
        banker_total = (banker_first + banker_second) % 10
        _add_rest_of_coup(weights, piles, cards - 4, player_total, banker_total, weight)
        for pile in first_four:
            piles[pile] += 1
    assert sum(weights) == _draws_total(decks)
    return weights[0], weights[1], weights[2]


def _first_four_draws(piles: list[int]) -> list[tuple[tuple[int, ...], int]]:
    """Every ordered sequence of four card values with its number of ways to be drawn."""
    return [(values, _ways(piles, values)) for values in itertools.product(_VALUES, repeat=4)]


def _ways(piles: list[int], values: tuple[int, ...]) -> int:
    """How many ordered ways to draw `values` from `piles`, without replacement."""
    ways, taken = 1, [0] * 10
    for value in values:
        ways *= piles[value] - taken[value]
        taken[value] += 1
    return ways


def _add_rest_of_coup(
    weights: list[int], piles: list[int], cards: int, player: int, banker: int, weight: int
) -> None:
    """Play out the third cards from `piles` (holding `cards` cards) and add each result."""
    if is_natural(player) or is_natural(banker):
        _add_result(weights, player, banker, weight * _ways_to_fill(cards, 2))
    elif not player_draws(player):
        _add_banker_third(weights, piles, cards, player, banker, None, weight)
    else:
        for third in _VALUES:
            ways = piles[third]
            if ways:
                piles[third] -= 1
                player_total = (player + third) % 10
                _add_banker_third(
                    weights, piles, cards - 1, player_total, banker, third, weight * ways
                )
                piles[third] += 1


def _add_banker_third(
    weights: list[int],
    piles: list[int],
    cards: int,
    player: int,
    banker: int,
    player_third: int | None,
    weight: int,
) -> None:
    """The Banker's third card, if the tableau draws one, from `piles` holding `cards` cards."""
    positions_left = 1 if player_third is None else 0
    if not banker_draws(banker, player_third):
        _add_result(weights, player, banker, weight * _ways_to_fill(cards, positions_left + 1))
        return
    filler = _ways_to_fill(cards - 1, positions_left)
    for third in _VALUES:
        _add_result(weights, player, (banker + third) % 10, weight * piles[third] * filler)


def _ways_to_fill(cards: int, positions: int) -> int:
    """Ordered ways to fill the coup's unused positions from `cards` cards."""
    ways = 1
    for position in range(positions):
        ways *= cards - position
    return ways


def _add_result(weights: list[int], player: int, banker: int, weight: int) -> None:
    if player > banker:
        weights[0] += weight
    elif banker > player:
        weights[1] += weight
    else:
        weights[2] += weight
