"""How a P2P table looks in answers: its dealer and player, type, limits and round."""

from __future__ import annotations

from typing import Any

from domain.application import CasinoApplication
from domain.baccarat.p2p import P2PTable
from domain.baccarat.p2p_steps import worst_case_cents
from domain.money import format_cents


def table_view(app: CasinoApplication, table: P2PTable) -> dict[str, Any]:
    p2p = app.games.p2p
    kind = p2p.table_type(table.table_type)
    return {
        "table_id": table.table_id,
        "status": table.status,
        "mode": table.mode,
        "table_type": table.table_type,
        "limits": {
            "min": format_cents(kind.stake_min_cents),
            "max": format_cents(kind.stake_max_cents),
        },
        "dealer_points_min": kind.points_min,
        "dealer_worst_case": format_cents(worst_case_cents(p2p, kind)),
        "auto_confirm": table.auto_confirm,
        "dealer": _person(app, table.dealer_id),
        "player": _person(app, table.player_id) if table.player_id else None,
        "round_id": table.round_id,
        "rounds_played": table.rounds_played,
        "notice": table.notice,
    }


def _person(app: CasinoApplication, player_id: str) -> dict[str, str]:
    return {"player_id": player_id, "display_name": app.display_name(player_id)}
