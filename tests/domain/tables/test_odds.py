"""Chemin de fer's exact odds with the system's default choices (rules.md 2.3)."""

from fractions import Fraction

from domain.baccarat.odds import exact_odds
from domain.tables.odds import chemin_de_fer_odds


def test_with_the_default_choices_a_coup_wins_as_punto_banco_does() -> None:
    odds, punto_banco = chemin_de_fer_odds(6, 500), exact_odds(6, 8)
    assert (odds.punto, odds.banker, odds.tie) == (
        punto_banco.player,
        punto_banco.banker,
        punto_banco.tie,
    )
    assert odds.punto + odds.banker + odds.tie == 1


def test_the_edges_before_and_after_the_commission_are_exact() -> None:
    odds = chemin_de_fer_odds(6, 500)
    assert odds.punters_edge == odds.banker - odds.punto == odds.banker_edge_before_commission
    assert odds.commission_per_unit == Fraction(1, 20) * odds.banker
    # The banker, after the casino's 5%, loses what punto banco's banker bet loses: the
    # published 1.06% of six decks (Wizard of Odds, "Baccarat": 1.0558%).
    assert odds.banker_edge_after_commission == -exact_odds(6, 8).house_edge_banker
    assert round(float(odds.punters_edge), 6) == 0.012374
    assert round(float(-odds.banker_edge_after_commission), 6) == 0.010558
