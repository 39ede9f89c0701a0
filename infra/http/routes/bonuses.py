"""Bonus money (api.md, Bonus money; rules.md 9): grants, the list, forfeits."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse

from domain.errors import (
    BalanceLimitExceeded,
    BonusEnded,
    BonusQueueFull,
    InvalidAmount,
    InvalidBonus,
    PlayerExcluded,
    UnknownBonus,
    UnknownPlayer,
    WageringAboveCap,
)
from infra.http import answers as a
from infra.http.auth import READ
from infra.http.bodies import NewBonus
from infra.http.contract import answers
from infra.http.idempotency import Command, operator_command, service_command
from infra.http.reading import app_of
from infra.http.responses import FastJSONResponse
from infra.http.routes.players import PlayerId
from infra.http.views.wallets import bonus_view, bonuses_view

router = APIRouter(prefix="/v1/players", tags=["bonus money"])
BonusId = Annotated[str, Path(max_length=64, description="as the grant answered it")]


@router.post(
    "/{player_id}/bonuses",
    **answers(
        201,
        a.Bonus,
        UnknownPlayer,
        InvalidAmount,
        InvalidBonus,
        WageringAboveCap,
        BonusQueueFull,
        BalanceLimitExceeded,
        PlayerExcluded,
    ),
)
async def grant_bonus(
    player_id: PlayerId,
    body: NewBonus,
    request: Request,
    command: Command = Depends(operator_command),
) -> JSONResponse:
    """An operator grants bonus money to a player's real wallet: active at once, or in
    line behind the active one (first in, first out). A significant event."""
    app = app_of(request)
    grant = body.grant(app.games.bonus_wagering_max)  # before any state is read

    def answer(bonus: dict[str, Any]) -> dict[str, Any]:
        return bonus_view(player_id, bonus)

    outcome = await command.run(app.grant_bonus, answer, player_id, grant)
    return command.respond(outcome, 201)


@router.get(
    "/{player_id}/bonuses",
    dependencies=[Depends(READ)],
    **answers(200, a.Bonuses, UnknownPlayer),
)
def get_bonuses(request: Request, player_id: PlayerId) -> FastJSONResponse:
    """The player's bonuses: the active one, those waiting, the latest ended."""
    return FastJSONResponse(bonuses_view(app_of(request).wallet(player_id, "real")))


@router.post(
    "/{player_id}/bonuses/{bonus_id}/forfeit",
    **answers(200, a.Bonus, UnknownPlayer, UnknownBonus, BonusEnded),
)
async def forfeit_bonus(
    player_id: PlayerId,
    bonus_id: BonusId,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """The player (through the upstream service) or an operator gives a bonus up, active
    or waiting: its money goes back to casino:bonus, what is held as its rounds settle.
    A significant event."""
    app = app_of(request)

    def answer(bonus: dict[str, Any]) -> dict[str, Any]:
        return bonus_view(player_id, bonus)

    role = request.state.principal.role
    outcome = await command.run(app.forfeit_bonus, answer, player_id, bonus_id, role)
    return command.respond(outcome, 200)
