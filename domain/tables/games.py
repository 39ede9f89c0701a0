"""Every multi-player table game, by name (rules.md 2.2-2.4): its rules, as
`domain/tables/tableau.py` shapes them."""

from __future__ import annotations

from domain.tables.chemin_de_fer import CHEMIN_DE_FER, CHEMIN_DE_FER_RULES
from domain.tables.en_banque import EN_BANQUE, EN_BANQUE_RULES
from domain.tables.punto_banco import PUNTO_BANCO, PUNTO_BANCO_RULES
from domain.tables.tableau import TableGameRules

RULES: dict[str, TableGameRules] = {
    PUNTO_BANCO: PUNTO_BANCO_RULES,
    CHEMIN_DE_FER: CHEMIN_DE_FER_RULES,
    EN_BANQUE: EN_BANQUE_RULES,
}


def rules_of(game: str) -> TableGameRules:
    return RULES[game]
