"""Every baccarat game, by name (rules.md 2.1-2.4): its rules, as
`domain/tables/tableau.py` shapes them. The tables of many players (punto banco,
chemin de fer, en banque) and the one-seat rounds (house, P2P) are coups alike."""

from __future__ import annotations

from domain.tables.chemin_de_fer import CHEMIN_DE_FER, CHEMIN_DE_FER_RULES
from domain.tables.en_banque import EN_BANQUE, EN_BANQUE_RULES
from domain.tables.punto_banco import (
    HOUSE,
    HOUSE_RULES,
    P2P,
    P2P_RULES,
    PUNTO_BANCO,
    PUNTO_BANCO_RULES,
)
from domain.tables.tableau import TableGameRules

RULES: dict[str, TableGameRules] = {
    PUNTO_BANCO: PUNTO_BANCO_RULES,
    CHEMIN_DE_FER: CHEMIN_DE_FER_RULES,
    EN_BANQUE: EN_BANQUE_RULES,
    HOUSE: HOUSE_RULES,  # the single-player round, a one-seat table the house banks
    P2P: P2P_RULES,  # a P2P round: one seat, the dealer the banker
}


def rules_of(game: str) -> TableGameRules:
    return RULES[game]
