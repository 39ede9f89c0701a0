"""The table games' rules (rules.md 2.2): seats and spots. An American table plays its
coups by the one punto banco tableau, which tests/domain/baccarat/test_rules.py checks
against the rule book on every sequence of six card values."""

import pytest

from domain.errors import UnknownSeat, UnknownSpot
from domain.tables.punto_banco import PUNTO_BANCO_RULES


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
