"""Punto banco at an American table (rules.md 2, 2.2): the house is the bank; its coups
are played by the one punto banco tableau of domain/baccarat/rules.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from domain.baccarat.rules import (
    BANKER,
    DEAL_ORDER,
    PLAYER,
    TIE,
    bet_net_cents,
    outcome_of,
    punto_banco_tableau,
)
from domain.tables.tableau import OneSeatRules, TableGameRules

PUNTO_BANCO = "punto_banco"
HOUSE, P2P = "house", "p2p"  # the single-player round's variants


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
    deal_order=DEAL_ORDER,
    tableau=punto_banco_tableau,
    bet_net=punto_banco_bet_net,
)

# The house's single-player round (rules.md 2.2): a one-seat table the house banks.
HOUSE_RULES = OneSeatRules(
    name=HOUSE,
    seats=("1",),
    spots=(PLAYER, BANKER, TIE),
    deal_order=DEAL_ORDER,
    tableau=punto_banco_tableau,
    bet_net=punto_banco_bet_net,
)
# A P2P round (rules.md 2.1): one player against the dealer, who is the banker; the
# casino takes its rate of every stake, and the dealer's dealer points go down.
P2P_RULES = replace(HOUSE_RULES, name=P2P, commission_on_stakes=True, dealer_points=True)
