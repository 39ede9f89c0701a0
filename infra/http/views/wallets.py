"""How players, wallets, ledger lines and game history look in answers: money as
decimal strings, plain JSON."""

from __future__ import annotations

from typing import Any

from domain.money import format_cents
from domain.player import Player
from domain.wallet import Movement, Wallet


def player_view(player: Player) -> dict[str, Any]:
    return {"player_id": player.player_id, "display_name": player.display_name}


def wallet_view(wallet: Wallet) -> dict[str, Any]:
    last = wallet.last_round
    return {
        "player_id": wallet.player_id,
        "mode": wallet.mode,
        "balance": format_cents(wallet.balance_cents),
        "held": format_cents(wallet.held_cents),
        "available": format_cents(wallet.available_cents),
        "dealer_points": wallet.points,
        "last_round": None
        if last is None
        else {
            "round_id": last["round_id"],
            "net": format_cents(last["net_cents"]),
            "commission": format_cents(last["commission_cents"]),
        },
        "bonus": _wallet_bonus_view(wallet.active_bonus),
    }


def _wallet_bonus_view(bonus: dict[str, Any] | None) -> dict[str, Any] | None:
    if bonus is None:
        return None
    return {
        "bonus_id": bonus["bonus_id"],
        "balance": format_cents(bonus["balance_cents"]),
        "held": format_cents(bonus["held_cents"]),
        "wagering_required": format_cents(bonus["wagering_required_cents"]),
        "wagered": format_cents(bonus["wagered_cents"]),
        "expires_at": bonus["expires_at"],
    }


def bonus_view(player_id: str, bonus: dict[str, Any]) -> dict[str, Any]:
    """A bonus as api.md shows it."""
    return {
        "bonus_id": bonus["bonus_id"],
        "player_id": player_id,
        "status": bonus["status"],
        "amount": format_cents(bonus["amount_cents"]),
        "balance": format_cents(bonus["balance_cents"]),
        "held": format_cents(bonus["held_cents"]),
        "wagering_required": format_cents(bonus["wagering_required_cents"]),
        "wagered": format_cents(bonus["wagered_cents"]),
        "expires_at": bonus["expires_at"],
        "max_bet": _cents_or_none(bonus["max_bet_cents"]),
        "max_conversion": _cents_or_none(bonus["max_conversion_cents"]),
    }


def bonuses_view(wallet: Wallet) -> dict[str, Any]:
    """Every bonus a wallet remembers: active, waiting in line, then the latest ended."""
    views = [bonus_view(wallet.player_id, bonus) for bonus in wallet.bonuses_in_order()]
    return {
        "active": next((view for view in views if view["status"] == "active"), None),
        "waiting": [view for view in views if view["status"] == "waiting"],
        "past": [view for view in views if view["status"] not in ("active", "waiting")],
    }


def net_split(bonus_nets: dict[str, list[int]]) -> dict[str, Any]:
    """A settled round's results in cash and in bonus money, per player who staked bonus
    money in it (`net_split`), or nothing: rounds without a bonus answer as before."""
    if not bonus_nets:
        return {}
    return {
        "net_split": {
            player: {"net_cash": format_cents(cash), "net_bonus": format_cents(bonus)}
            for player, (cash, bonus) in sorted(bonus_nets.items())
        }
    }


def _cents_or_none(cents: int | None) -> str | None:
    return None if cents is None else format_cents(cents)


def movement_view(movement: Movement) -> dict[str, Any]:
    return {"transaction_id": movement.transaction_id, "wallet": wallet_view(movement.wallet)}


def ledger_entry_view(entry: dict[str, Any]) -> dict[str, Any]:
    """A ledger read-model row as api.md shows it."""
    return {
        "entry_id": str(entry["entry_id"]),
        "at": entry["at"],
        "kind": entry["kind"],
        "amount": format_cents(entry["amount_cents"]),
        "balance_after": format_cents(entry["balance_after_cents"]),
        "round_id": entry["round_id"],
        "transaction_id": entry["transaction_id"],
    }


def history_entry_view(
    result: dict[str, Any], round_: dict[str, Any], player_id: str
) -> dict[str, Any]:
    """One settled round of a player's history: their result and their own bets (at a
    table, among many players') beside the whole round."""
    return {
        "round_id": result["round_id"],
        "started_at": result["started_at"],
        "settled_at": result["at"],
        "role": "dealer" if round_.get("dealer_id") == player_id else "player",
        "net": format_cents(result["net_cents"]),
        "commission": format_cents(result["commission_cents"]),
        "balance_before": format_cents(result["balance_before_cents"]),
        "balance_after": format_cents(result["balance_after_cents"]),
        "bets": [bet for bet in round_["bets"] if bet.get("player_id", player_id) == player_id],
        "round": round_,
    }
