"""Operators' reports (API.md, Operators)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request

from domain.money import format_cents
from infra.auth import REPORT
from infra.projected import projected
from projections import balances

router = APIRouter(prefix="/v1/reports", tags=["reports"], dependencies=[Depends(REPORT)])


@router.get("/trial-balance")
def trial_balance(request: Request, mode: Literal["real", "play"] = "real") -> dict[str, Any]:
    with projected(request) as cursor:
        accounts = balances.trial_balance(cursor, mode)
    total = sum(cents for _, cents in accounts)
    return {
        "mode": mode,
        "accounts": [
            {"account": account, "balance": format_cents(cents)} for account, cents in accounts
        ],
        "total": format_cents(total),
    }


@router.get("/liability")
def liability(request: Request, mode: Literal["real", "play"] = "real") -> dict[str, Any]:
    with projected(request) as cursor:
        balance_cents, held_cents, wallets = balances.liability(cursor, mode)
    return {
        "mode": mode,
        "player_balances": format_cents(balance_cents),
        "held_in_open_rounds": format_cents(held_cents),
        "available_to_players": format_cents(balance_cents - held_cents),
        "wallets": wallets,
    }
