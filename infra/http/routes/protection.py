"""Player protection: limits and exclusions (api.md, Player protection; rules.md 7)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from domain.errors import (
    InvalidAmount,
    InvalidLimit,
    PlayerExcluded,
    UnknownPeriod,
    UnknownPlayer,
)
from domain.protection import Protection
from infra.http import answers_protection as a
from infra.http.auth import READ
from infra.http.bodies import NewExclusion, NewLimits
from infra.http.contract import answers
from infra.http.idempotency import Command, service_command
from infra.http.reading import app_of
from infra.http.routes.players import PlayerId
from infra.http.views.protection import protection_view

router = APIRouter(prefix="/v1/players", tags=["player protection"])


@router.put(
    "/{player_id}/limits",
    **answers(200, a.LimitsSet, UnknownPlayer, InvalidAmount, InvalidLimit, UnknownPeriod),
)
def set_limits(
    player_id: PlayerId,
    body: NewLimits,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """Set deposit and loss limits per rolling day, week (7 days) and month (30 days),
    real money; each window the body names changes, the others stay. A lower limit
    takes effect at once; a higher one (or none) after 24 hours, and a second raise
    within them replaces the first. The service sets them on the player's behalf."""
    app = app_of(request)

    def answer(result: tuple[Protection, dict[str, str]]) -> dict[str, Any]:
        protection, effective = result
        return {**protection_view(player_id, protection, app.clock()), "effective_at": effective}

    outcome = app.set_limits.with_receipt(command.receipt(answer), player_id, body.changes())
    return command.respond(outcome, 200)


@router.get(
    "/{player_id}/limits", dependencies=[Depends(READ)], **answers(200, a.Protection, UnknownPlayer)
)
def get_limits(request: Request, player_id: PlayerId) -> dict[str, Any]:
    """Every limit as it stands now: in effect, used, left, when it resets, and a raise
    waiting; and the exclusion, while one runs."""
    app = app_of(request)
    return protection_view(player_id, app.protection(player_id), app.clock())


@router.post(
    "/{player_id}/exclusions",
    **answers(201, a.Excluded, UnknownPlayer, UnknownPeriod, PlayerExcluded),
)
def exclude(
    player_id: PlayerId,
    body: NewExclusion,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """A time-out (24 hours to 6 weeks) or self-exclusion (6 months to 5 years) from
    now. Until it ends the player can deposit, bet, sit down or deal nothing, and may
    still withdraw; their open rounds end as if they had disconnected. It cannot be
    lifted early or changed; it ends by itself."""

    def answer(result: tuple[dict[str, str], list[dict[str, str]]]) -> dict[str, Any]:
        exclusion, affected = result
        return {"player_id": player_id, "exclusion": exclusion, "affected_rounds": affected}

    outcome = app_of(request).exclude.with_receipt(command.receipt(answer), player_id, body.period)
    return command.respond(outcome, 201)
