"""Operators' reports (api.md, Operators)."""

from __future__ import annotations

import datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from domain.money import format_cents
from infra.http import answers as a
from infra.http.auth import REPORT
from infra.http.contract import answers
from infra.http.problems import Problem
from infra.http.reading import min_position, projected
from projections import balances, commission

router = APIRouter(
    prefix="/v1/reports", tags=["reports"], dependencies=[Depends(REPORT), Depends(min_position)]
)


@router.get("/trial-balance", **answers(200, a.TrialBalance))
def trial_balance(request: Request, mode: Literal["real", "play"] = "real") -> dict[str, Any]:
    """Every account of the mode with its balance; the total is always "0.00"."""
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


@router.get("/liability", **answers(200, a.Liability))
def liability(request: Request, mode: Literal["real", "play"] = "real") -> dict[str, Any]:
    """Total player balances, what is held in open rounds, and what is available."""
    with projected(request) as cursor:
        balance_cents, held_cents, wallets = balances.liability(cursor, mode)
    return {
        "mode": mode,
        "player_balances": format_cents(balance_cents),
        "held_in_open_rounds": format_cents(held_cents),
        "available_to_players": format_cents(balance_cents - held_cents),
        "wallets": wallets,
    }


@router.get("/commission", **answers(200, a.CommissionReport))
def commission_report(
    request: Request,
    mode: Literal["real", "play"] = "real",
    first_day: datetime.date = Query(default=datetime.date.min, alias="from"),
    last_day: datetime.date = Query(default=datetime.date.max, alias="to"),
) -> dict[str, Any]:
    """P2P commission per UTC day, `from` and `to` inclusive (YYYY-MM-DD)."""
    if first_day > last_day:
        raise Problem(
            422,
            "invalid_request",
            f"from ({first_day}) is after to ({last_day}): no day is in between",
        )
    with projected(request) as cursor:
        days = commission.per_day(cursor, mode, first_day.isoformat(), last_day.isoformat())
    return {
        "mode": mode,
        "from": None if first_day == datetime.date.min else first_day.isoformat(),
        "to": None if last_day == datetime.date.max else last_day.isoformat(),
        "days": [
            {"day": day, "commission": format_cents(cents), "rounds": rounds}
            for day, cents, rounds in days
        ],
        "total": format_cents(sum(cents for _, cents, _ in days)),
    }
