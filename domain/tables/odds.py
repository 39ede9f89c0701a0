"""Exact odds of chemin de fer (rules.md 2.3) with the system's default choices, by
full enumeration of the shoe.

With every choice made as the system makes it (the punto draws on 5; the banker
draws on 3 against a 9 and on 5 against a 4) a coup plays exactly as punto banco,
so the punto and the banker win as often as punto banco's player and banker. What
differs is who takes what: a punter's bet wins 1:1 from the bank, and the casino
takes its commission from the banker's winnings.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from domain.baccarat.odds import exact_odds
from domain.money import BASIS_POINTS


@dataclass(frozen=True, slots=True)
class CheminDeFerOdds:
    decks: int
    commission_basis_points: int
    punto: Fraction  # the punters' hand wins
    banker: Fraction
    tie: Fraction
    punters_edge: Fraction  # what a punter loses per unit bet, on average
    banker_edge_before_commission: Fraction  # what the bank wins per unit it covers
    banker_edge_after_commission: Fraction
    commission_per_unit: Fraction  # the casino's take per unit covered


def chemin_de_fer_odds(decks: int, commission_basis_points: int) -> CheminDeFerOdds:
    odds = exact_odds(decks, tie_pays=1)  # the tie payout plays no part here
    rate = Fraction(commission_basis_points, BASIS_POINTS)
    edge = odds.banker - odds.player
    return CheminDeFerOdds(
        decks=decks,
        commission_basis_points=commission_basis_points,
        punto=odds.player,
        banker=odds.banker,
        tie=odds.tie,
        punters_edge=edge,
        banker_edge_before_commission=edge,
        banker_edge_after_commission=edge - rate * odds.banker,
        commission_per_unit=rate * odds.banker,
    )
