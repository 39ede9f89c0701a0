"""The table games' rules (rules.md 2.2): seats, spots, and a tableau that plays every
coup exactly as the single-player game does."""

import itertools

import pytest

from domain.baccarat.rules import play_coup
from domain.errors import UnknownSeat, UnknownSpot
from domain.tables.punto_banco import PUNTO_BANCO_RULES
from domain.tables.tableau import Draw, Over, Step

# One card of each value, enough to build every sequence of six card values.
CARDS_BY_VALUE = ["10", "A", "2", "3", "4", "5", "6", "7", "8", "9"]


def played(cards: list[str]) -> tuple[dict[str, list[str]], Step]:
    """The punto banco tableau asked step by step, from these cards in shoe order."""
    shoe = iter(cards)
    hands: dict[str, list[str]] = {}
    for hand in PUNTO_BANCO_RULES.deal_order:
        hands.setdefault(hand, []).append(next(shoe))
    step = PUNTO_BANCO_RULES.tableau(hands, {}, {})
    while isinstance(step, Draw):
        hands[step.hand].append(next(shoe))
        step = PUNTO_BANCO_RULES.tableau(hands, {}, {})
    return hands, step


def test_the_tableau_plays_every_coup_as_the_single_player_game_does() -> None:
    for values in itertools.product(range(10), repeat=6):
        cards = [CARDS_BY_VALUE[value] for value in values]
        hands, over = played(cards)
        coup = play_coup(cards)
        assert isinstance(over, Over) and over.outcome == coup.outcome
        assert (hands["player"], hands["banker"]) == (
            list(coup.player_cards),
            list(coup.banker_cards),
        )


def test_an_american_table_has_fourteen_seats_1_to_15_without_13() -> None:
    assert PUNTO_BANCO_RULES.seats == ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
                                       "11", "12", "14", "15")  # fmt: skip
    for seat in ("13", "16", "0", "R1", ""):
        with pytest.raises(UnknownSeat, match="the seats are 1, 2"):
            PUNTO_BANCO_RULES.check_seat(seat)


def test_bets_go_on_player_banker_or_tie() -> None:
    for spot in ("player", "banker", "tie"):
        PUNTO_BANCO_RULES.check_spot(spot)
    with pytest.raises(UnknownSpot):
        PUNTO_BANCO_RULES.check_spot("punto")
