"""How domain objects look in answers: decimal strings for money, plain JSON."""

from __future__ import annotations

from typing import Any

from domain import wallet as wallet_topics
from domain.money import format_cents
from domain.player import Player
from domain.wallet import Wallet

LEDGER_KINDS = {
    wallet_topics.DEPOSITED: "deposit",
    wallet_topics.WITHDRAWN: "withdrawal",
    wallet_topics.ROUND_SETTLED: "round_result",
    wallet_topics.COMMISSION_CHARGED: "commission",
}


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
    }


def ledger_entry(event: Any, account: str) -> dict[str, Any] | None:
    """A wallet event as a ledger line, or None for events that move no money."""
    kind = LEDGER_KINDS.get(wallet_topics.topic_of(event))
    if kind is None:
        return None
    own = sum(cents for posted_to, cents in event.postings if posted_to == account)
    return {
        "entry_id": str(event.originator_version),
        "at": event.timestamp.isoformat(),
        "kind": kind,
        "amount": format_cents(own),
        "balance_after": format_cents(event.balance_after_cents),
        "round_id": getattr(event, "round_id", None),
        "transaction_id": getattr(event, "transaction_id", None),
    }
