"""Player protection: limits and exclusions (api.md, Player protection; rules.md 7)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from domain.errors import (
    InvalidAmount,
    InvalidLimit,
    InvalidMode,
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
from infra.http.views.protection import exclusions_view, limits_view

router = APIRouter(prefix="/v1/players", tags=["player protection"])


@router.put(
    "/{player_id}/limits",
    **answers(
        200, a.PlayerLimits, UnknownPlayer, InvalidAmount, InvalidLimit, UnknownPeriod, InvalidMode
    ),
)
async def set_limits(
    player_id: PlayerId,
    body: NewLimits,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """Set deposit and loss limits per rolling day, week (7 days) and month (30 days),
    real money; each window the body names changes, the others stay. A lower limit
    takes effect at once; a higher one (or none) after 24 hours, listed in `pending`
    until then, and a second raise within them replaces the first. The service sets
    them on the player's behalf; an operator may too."""
    app = app_of(request)

    def answer(result: tuple[Protection, dict[str, str]]) -> dict[str, Any]:
        return limits_view(player_id, result[0], app.clock())

    outcome = await command.run(
        app.set_limits, answer, player_id, body.changes(), request.state.principal.role
    )
    return command.respond(outcome, 200)


@router.get(
    "/{player_id}/limits",
    dependencies=[Depends(READ)],
    **answers(200, a.PlayerLimits, UnknownPlayer, InvalidMode),
)
def get_limits(request: Request, player_id: PlayerId, mode: Literal["real"] = "real") -> Any:
    """The limits in effect, the raises waiting, and what each window leaves now."""
    app = app_of(request)
    return limits_view(player_id, app.protection(player_id), app.clock())


@router.post(
    "/{player_id}/exclusions",
    **answers(201, a.Excluded, UnknownPlayer, UnknownPeriod, PlayerExcluded),
)
async def exclude(
    player_id: PlayerId,
    body: NewExclusion,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """A time-out (1-42 days) or self-exclusion (6, 12, 24 or 60 months) from now.
    Until it ends the player can deposit, bet, sit down or deal nothing, and may still
    withdraw; their open rounds end as if they had disconnected. It cannot be lifted
    early or changed: it ends by itself."""

    def answer(result: tuple[dict[str, str], list[dict[str, str]]]) -> dict[str, Any]:
        exclusion, affected = result
        return {"player_id": player_id, **exclusion, "affected_rounds": affected}

    role = request.state.principal.role
    outcome = await command.run(
        app_of(request).exclude, answer, player_id, body.kind, body.length, role
    )
    return command.respond(outcome, 201)


@router.get(
    "/{player_id}/exclusions",
    dependencies=[Depends(READ)],
    **answers(200, a.Exclusions, UnknownPlayer),
)
def get_exclusions(request: Request, player_id: PlayerId) -> dict[str, Any]:
    """The exclusion running now, if any, and those over."""
    app = app_of(request)
    return exclusions_view(player_id, app.protection(player_id), app.clock())
