from fractions import Fraction

import pytest

from domain.baccarat.odds import exact_odds


def test_eight_decks_reproduce_the_published_probabilities() -> None:
    odds = exact_odds(decks=8, tie_pays=8)
    assert round(float(odds.banker), 6) == 0.458597
    assert round(float(odds.player), 6) == 0.446247
    assert round(float(odds.tie), 6) == 0.095156


def test_eight_decks_with_tie_at_8_to_1_reproduce_the_published_house_edges() -> None:
    odds = exact_odds(decks=8, tie_pays=8)
    assert round(float(odds.house_edge_banker) * 100, 2) == 1.06
    assert round(float(odds.house_edge_player) * 100, 2) == 1.24
    assert round(float(odds.house_edge_tie) * 100, 2) == 14.36


def test_a_tie_at_9_to_1_on_eight_decks_has_a_house_edge_of_4_844_percent() -> None:
    assert round(float(exact_odds(decks=8, tie_pays=9).house_edge_tie) * 100, 3) == 4.844


def test_six_decks_with_tie_at_9_to_1_are_close_to_the_eight_deck_game() -> None:
    odds = exact_odds(decks=6, tie_pays=9)
    assert odds.player + odds.banker + odds.tie == 1
    assert abs(float(odds.house_edge_banker) * 100 - 1.06) < 0.01
    assert abs(float(odds.house_edge_player) * 100 - 1.24) < 0.01
    # Regression values of this enumeration, to six places.
    assert round(float(odds.banker), 6) == 0.458653
    assert round(float(odds.player), 6) == 0.446279
    assert round(float(odds.tie), 6) == 0.095069


@pytest.mark.parametrize("decks", range(1, 9))
def test_the_probabilities_are_exact_fractions_summing_to_one(decks: int) -> None:
    odds = exact_odds(decks=decks, tie_pays=8)
    assert all(isinstance(p, Fraction) for p in (odds.player, odds.banker, odds.tie))
    assert odds.player + odds.banker + odds.tie == 1


def test_the_house_edges_follow_from_the_probabilities_and_payouts() -> None:
    odds = exact_odds(decks=6, tie_pays=9)
    assert odds.house_edge_player == -(odds.player - odds.banker)
    assert odds.house_edge_banker == -(odds.banker * Fraction(19, 20) - odds.player)
    assert odds.house_edge_tie == -(odds.tie * 9 - (1 - odds.tie))


@pytest.mark.parametrize(("decks", "tie_pays"), [(0, 8), (9, 8), (8, 0)])
def test_impossible_settings_are_refused(decks: int, tie_pays: int) -> None:
    with pytest.raises(ValueError):
        exact_odds(decks=decks, tie_pays=tie_pays)
