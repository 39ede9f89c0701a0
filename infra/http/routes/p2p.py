"""P2P baccarat: play as the dealer (api.md, P2P baccarat)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse

from domain import errors as e
from infra.http.answers import P2PTable, P2PTableWithRound
from infra.http.answers_rounds import Round
from infra.http.auth import READ
from infra.http.bodies import Confirmation, Leaving, NewDealer, NewTablePlayer
from infra.http.contract import answers
from infra.http.idempotency import Command, service_command
from infra.http.reading import app_of
from infra.http.responses import FastJSONResponse
from infra.http.views.p2p import table_view
from infra.http.views.rounds import round_view

router = APIRouter(prefix="/v1/p2p", tags=["p2p baccarat"])
TableId = Annotated[str, Path(max_length=80, description="issued by the server")]
SITTING = (
    e.UnknownPlayer,
    e.UnknownTableType,
    e.AlreadyAtTable,
    e.RoundInterrupted,
    e.PlayerExcluded,
)


@router.post(
    "/dealers",
    **answers(
        201, P2PTable, *SITTING, e.NotEligibleToDeal, e.BalanceLimitExceeded, e.LossLimitExceeded
    ),
)
async def sit_as_dealer(
    body: NewDealer, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Sit down to deal at a P2P table of a type, if eligible."""
    app = app_of(request)
    outcome = await command.run(
        app.sit_as_dealer,
        lambda table: table_view(app, table),
        body.player_id,
        body.mode,
        body.table_type,
        body.auto_confirm,
    )
    return command.respond(outcome, 201)


@router.post("/players", **answers(201, P2PTable, *SITTING, e.NoDealerAvailable))
async def join_as_player(
    body: NewTablePlayer, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Be matched with the longest-waiting eligible dealer of a table type."""
    app = app_of(request)
    outcome = await command.run(
        app.join_as_player,
        lambda table: table_view(app, table),
        body.player_id,
        body.mode,
        body.table_type,
    )
    return command.respond(outcome, 201)


@router.post(
    "/tables/{table_id}/confirm",
    **answers(
        201,
        Round,
        e.UnknownTable,
        e.TableNotReady,
        e.NotEligibleToDeal,
        e.BalanceLimitExceeded,
        e.TestModeDisabled,
        e.InvalidShoe,
        e.PlayerExcluded,
        e.LossLimitExceeded,
    ),
)
async def confirm(
    table_id: TableId,
    request: Request,
    body: Confirmation | None = None,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """The dealer confirms the next round: it opens for bets, the worst case held."""
    shoe = body.shoe if body is not None else None
    outcome = await command.run(app_of(request).confirm, round_view, table_id, shoe)
    return command.respond(outcome, 201)


@router.post("/tables/{table_id}/leave", **answers(200, P2PTable, e.UnknownTable, e.NotAtTable))
async def leave(
    table_id: TableId, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """The dealer or the player leaves the table; an open round is voided."""
    app = app_of(request)
    outcome = await command.run(
        app.leave_table, lambda table: table_view(app, table), table_id, body.player_id
    )
    return command.respond(outcome, 200)


@router.get(
    "/tables/{table_id}",
    dependencies=[Depends(READ)],
    **answers(200, P2PTableWithRound, e.UnknownTable),
)
def get_table(table_id: TableId, request: Request) -> FastJSONResponse:
    """The table, with its current round in full."""
    app = app_of(request)
    table, current = app.p2p_table_with_round(table_id)
    view = table_view(app, table)
    view["current_round"] = None if current is None else round_view(current)
    return FastJSONResponse(view)  # already JSON's own types: no second encoding pass
