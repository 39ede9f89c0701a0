"""How multi-player tables and their coups look in answers (api.md, Multi-player tables)."""

from __future__ import annotations

from typing import Any

from domain.baccarat.rules import TIE
from domain.money import format_cents
from domain.rounds import secrets_revealed
from domain.tables.coup import SETTLED_STATUS, Coup
from domain.tables.games import rules_of
from domain.tables.table import Table, seat_order
from infra.http.views.wallets import net_split


def table_view(table: Table, current_round: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "table_id": table.table_id,
        "game": table.game,
        "mode": table.mode,
        "status": table.status,
        "limits": {
            "bet_min": format_cents(table.bet_min_cents),
            "bet_max": format_cents(table.bet_max_cents),
            "bank_min": format_cents(table.bank_min_cents) if table.bank_max_cents else None,
            "bank_max": format_cents(table.bank_max_cents) if table.bank_max_cents else None,
        },
        "seats": [
            {"seat": seat, "player_id": player_id, "leaving": player_id in table.leaving}
            for seat, player_id in sorted(table.seats.items(), key=lambda item: seat_order(item[0]))
        ],
        "banker": _banker(table),
        "bank_offered_to": table.bank_offered_to,
        "current_round": current_round,
        "coups_played": table.coups_played,
    }


def coup_view(coup: Coup) -> dict[str, Any]:
    settled = coup.status == SETTLED_STATUS
    nets = coup.nets()
    return {
        "round_id": coup.round_id,
        "game": "baccarat",
        "variant": coup.variant,
        "status": coup.status,
        "mode": coup.mode,
        "table_id": coup.table_id,
        "seed_commitment": coup.seed_commitment,
        "seed": coup.seed if secrets_revealed(coup.status) else None,
        "shuffle_algorithm": coup.shuffle_algorithm,
        "decks": coup.decks,
        "tie_pays": coup.tie_pays if TIE in rules_of(coup.variant).spots else None,
        "limits": {
            "min": format_cents(coup.bet_min_cents),
            "max": format_cents(coup.bet_max_cents),
            "per": "player",
        },
        "bets": [
            {"player_id": player_id, "spot": spot, "amount": format_cents(cents)}
            for player_id, spots in sorted(coup.bets.items())
            for spot, cents in sorted(spots.items())
        ],
        "total_stake": format_cents(coup.total_stake_cents),
        "returned": _amounts(coup.returned, amount="amount_cents", covered="covered_cents"),
        "hands": {
            hand: {"cards": list(cards), "total": coup.totals().get(hand)}
            for hand, cards in coup.hands.items()
        },
        "playing": dict(coup.playing),
        "next": _next(coup),
        "decisions": [dict(decision) for decision in coup.decisions],
        "outcome": coup.outcome,
        "payouts": _amounts(coup.payouts, stake="stake_cents", net="net_cents"),
        "banker_id": coup.banker_id,
        "banco": dict(coup.banco) if coup.banco is not None else None,
        "bank_before": format_cents(coup.bank_cents) if coup.banker_id else None,
        "bank_after": format_cents(coup.bank_after_cents) if coup.banker_id and settled else None,
        "commission": format_cents(coup.commission_cents) if coup.banker_id else None,
        "net": {who: format_cents(cents) for who, cents in nets.items()} if settled else None,
        "casino_net": format_cents(coup.casino_net_cents()) if settled else None,
        "void_reason": coup.void_reason,
        **net_split(coup.bonus_nets),
    }


def _amounts(rows: list[dict[str, Any]], **cents: str) -> list[dict[str, Any]]:
    """Each row's player and spot, and its cents as amounts named as the answer names them."""
    return [
        {"player_id": row["player_id"], "spot": row["spot"]}
        | {name: format_cents(row[key]) for name, key in cents.items()}
        for row in rows
    ]


def _banker(table: Table) -> dict[str, Any] | None:
    if table.banker is None:
        return None
    seat = table.seat_of(table.banker)
    return {"player_id": table.banker, "seat": seat, "bank": format_cents(table.bank_cents)}


def _next(coup: Coup) -> dict[str, Any] | None:
    pending = coup.pending
    if pending is None:
        return None
    return {key: pending[key] for key in ("player_id", "hand", "actions", "deadline")}
