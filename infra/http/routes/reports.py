"""Operators' reports (api.md, Operators)."""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from domain.money import format_cents
from infra import reports
from infra.http import answers_reports as a
from infra.http.auth import REPORT
from infra.http.contract import answers
from infra.http.dates import Day
from infra.http.negotiation import CSV, csv_answer, wants_csv
from infra.http.problems import Problem
from infra.http.reading import app_of, min_position, projected
from projections import balances, bonuses, commission

router = APIRouter(
    prefix="/v1/reports", tags=["reports"], dependencies=[Depends(REPORT), Depends(min_position)]
)


@router.get("/trial-balance", **answers(200, a.TrialBalance))
def trial_balance(request: Request, mode: Literal["real", "play"] = "real") -> dict[str, Any]:
    """Every account of the mode with its balance; the total is always "0.00"."""
    with projected(request) as cursor:
        accounts = balances.trial_balance(cursor, mode)
        balances.check_accounts(accounts)
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
        balances.check_liability(balance_cents, held_cents)
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
    # Query inside Annotated: as a default, FastAPI would drop Day's own check.
    first_day: Annotated[Day, Query(alias="from")] = datetime.date.min,
    last_day: Annotated[Day, Query(alias="to")] = datetime.date.max,
) -> dict[str, Any]:
    """P2P commission per UTC day, `from` and `to` inclusive (YYYY-MM-DD)."""
    _check_days(first_day, last_day)
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


@router.get("/bonus", **answers(200, a.BonusReport))
def bonus_report(
    request: Request,
    first_day: Annotated[Day, Query(alias="from")] = datetime.date.min,
    last_day: Annotated[Day, Query(alias="to")] = datetime.date.max,
) -> dict[str, Any]:
    """Bonus money per UTC day with any (real money; rules.md 9), `from` and `to`
    inclusive (YYYY-MM-DD): granted, converted, forfeited, expired, and what was
    outstanding at the day's end."""
    _check_days(first_day, last_day)
    with projected(request) as cursor:
        days = bonuses.daily(cursor, first_day.isoformat(), last_day.isoformat())
    money = ("granted", "converted", "forfeited", "expired", "outstanding")
    return {
        "from": None if first_day == datetime.date.min else first_day.isoformat(),
        "to": None if last_day == datetime.date.max else last_day.isoformat(),
        "days": [
            {"day": day["day"]} | {name: format_cents(day[f"{name}_cents"]) for name in money}
            for day in days
        ],
    }


TOO_LARGE = (422, "report_too_large")
VARIANT = Query(
    default=None,
    pattern=r"^[a-z0-9_-]{1,32}$",
    description="baccarat: house, p2p, punto_banco, chemin_de_fer, en_banque;"
    " blackjack: the hall (1, 2, vip); external: the provider's id; all of the game's"
    " when left out",
)


@router.get("/revenue", **answers(200, a.RevenueReport, TOO_LARGE, also=(CSV,)))
def revenue_report(
    request: Request,
    mode: Literal["real", "play"] = "real",
    first_day: Annotated[Day | None, Query(alias="from")] = None,
    last_day: Annotated[Day | None, Query(alias="to")] = None,
    group: Literal["day", "month"] = "day",
) -> Any:
    """Stakes, returns, GGR and commission of settled rounds per UTC day or month, game
    and variant, `from` and `to` inclusive (YYYY-MM-DD; `to` is today when left out),
    with totals over them and month, year and life to date (to `to`)."""
    until = last_day or app_of(request).clock().date()
    _check_days(first_day or datetime.date.min, until)
    with projected(request) as cursor:
        try:
            report = reports.revenue_report(cursor, mode, first_day, until, group)
        except reports.ReportTooLarge as error:
            raise Problem(*TOO_LARGE, str(error)) from None
    return csv_answer(reports.revenue_csv(report)) if wants_csv(request) else report


@router.get("/rtp", **answers(200, a.RtpReport, also=(CSV,)))
def rtp_report(
    request: Request,
    game: Literal["baccarat", "blackjack", "external"],
    variant: str | None = VARIANT,
    mode: Literal["real", "play"] = "real",
    first_day: Annotated[Day | None, Query(alias="from")] = None,
    last_day: Annotated[Day | None, Query(alias="to")] = None,
) -> Any:
    """A game's actual return to player over its settled rounds (UTC days `from` to
    `to`, inclusive) beside the theoretical one for what was staked on each bet, and a
    95% interval of the difference."""
    _check_days(first_day or datetime.date.min, last_day or datetime.date.max)
    with projected(request) as cursor:
        report = reports.rtp_report(cursor, mode, game, variant, first_day, last_day)
    return csv_answer(reports.rtp_csv(report)) if wants_csv(request) else report


def _check_days(first_day: datetime.date, last_day: datetime.date) -> None:
    if first_day > last_day:
        raise Problem(
            422,
            "invalid_request",
            f"from ({first_day}) is after to ({last_day}): no day is in between",
        )
