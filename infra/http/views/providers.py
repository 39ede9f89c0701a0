"""Third-party games' answers as plain dictionaries (api.md, "Third-party games")."""

from __future__ import annotations

from typing import Any

from domain.money import format_cents
from domain.providers.provider import Provider
from domain.providers.round import GAME, ProviderRound
from domain.providers.steps import OpenedSession, ProviderWallet, WalletCall


def provider_view(provider: Provider) -> dict[str, Any]:
    return {
        "provider_id": provider.provider_id,
        "name": provider.name,
        "bonus_allowed": provider.bonus_allowed,
        "theoretical_rtp": provider.theoretical_rtp,
    }


def session_view(opened: OpenedSession) -> dict[str, Any]:
    session = opened.session
    return {
        "token": opened.token,
        "player_id": session.player_id,
        "provider_id": session.provider_id,
        "game_id": session.game_id,
        "mode": session.mode,
        "expires_at": session.expires_at.isoformat(),
    }


def money_of(seen: ProviderWallet) -> dict[str, str]:
    """Cash, the bonus the provider's games may stake (none where it allows none), and
    both together (rules.md 10)."""
    cash, bonus = seen.wallet.available_cents, seen.bonus_cents
    return {
        "cash": format_cents(cash),
        "bonus": format_cents(bonus),
        "balance": format_cents(cash + bonus),
    }


def balance_view(seen: ProviderWallet) -> dict[str, Any]:
    return {"player_id": seen.wallet.player_id, "currency": "USD", **money_of(seen)}


def call_view(call: WalletCall) -> dict[str, Any]:
    return {"transaction_id": call.transaction_id, **money_of(call)}


def bet_view(call: WalletCall) -> dict[str, Any]:
    used = {"used_cash": format_cents(call.used.cash_cents),
            "used_bonus": format_cents(call.used.bonus_cents)}  # fmt: skip
    return {**call_view(call), **used}


def ended_view(round_: ProviderRound) -> dict[str, Any]:
    return {"round_id": round_.round_ref, "status": "closed"}


def provider_audit_view(round_: ProviderRound, trail: list[dict[str, Any]]) -> dict[str, Any]:
    """Every call of a provider's round in log order, with the wallet's side of each:
    nothing in it is secret."""
    return {
        "round_id": round_.round_id,
        "status": round_.status,
        "events": [
            {**{k: event[k] for k in ("position", "aggregate_id", "version", "at", "topic")},
             "type": event["topic"].rsplit(".", 1)[-1], "data": event["data"]}
            for event in trail
        ],
    }  # fmt: skip


def external_round_view(round_: ProviderRound) -> dict[str, Any]:
    """A provider's round as GET /v1/rounds/{round_id} shows it."""

    def calls(found: dict[str, int]) -> list[dict[str, str]]:
        return [{"transaction_id": t, "amount": format_cents(c)} for t, c in found.items()]

    return {
        "round_id": round_.round_id,
        "game": GAME,
        "variant": round_.provider_id,
        "provider_round_id": round_.round_ref,
        "game_id": round_.game_id,
        "status": round_.status,
        "ended_by": round_.ended_by,
        "mode": round_.mode,
        "player_id": round_.player_id,
        "bets": calls(round_.bets),
        "rolled_back": calls(round_.rolled_back),
        "wins": list(round_.wins),
        "staked": format_cents(round_.staked_cents),
        "won": format_cents(round_.won_cents),
        "net": format_cents(round_.won_cents - round_.staked_cents),
        "last_call_at": round_.last_call_at,
    }
