"""Punto banco at an American table (rules.md 2, 2.2): the house is the bank; naturals
stand, then the Player's and the Banker's fixed rules; nobody ever chooses."""

from __future__ import annotations

from collections.abc import Mapping

from domain.baccarat.rules import (
    BANKER,
    PLAYER,
    TIE,
    banker_draws,
    bet_net_cents,
    card_value,
    hand_total,
    is_natural,
    outcome_of,
    player_draws,
)
from domain.tables.tableau import Draw, Hands, Over, Step, TableGameRules

PUNTO_BANCO = "punto_banco"


def punto_banco_tableau(
    hands: Hands, choices: Mapping[str, str], stakes: Mapping[str, int]
) -> Step:
    player, banker = hands[PLAYER], hands[BANKER]
    two_card = (hand_total(player[:2]), hand_total(banker[:2]))
    if not any(map(is_natural, two_card)):
        if len(player) == 2 and len(banker) == 2 and player_draws(two_card[0]):
            return Draw(PLAYER)
        third = card_value(player[2]) if len(player) == 3 else None
        if len(banker) == 2 and banker_draws(two_card[1], third):
            return Draw(BANKER)
    return Over(outcome_of(hand_total(player), hand_total(banker)))


def punto_banco_bet_net(
    spot: str, stake_cents: int, totals: Mapping[str, int], tie_pays: int
) -> int:
    outcome = outcome_of(totals[PLAYER], totals[BANKER])
    return bet_net_cents(spot, stake_cents, outcome, tie_pays)


# American baccarat (seed 004): seats 1-15 without 13, fourteen players at most.
PUNTO_BANCO_RULES = TableGameRules(
    name=PUNTO_BANCO,
    seats=tuple(str(seat) for seat in range(1, 16) if seat != 13),
    spots=(PLAYER, BANKER, TIE),
    deal_order=(PLAYER, BANKER, PLAYER, BANKER),
    tableau=punto_banco_tableau,
    bet_net=punto_banco_bet_net,
)
