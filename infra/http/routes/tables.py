"""Multi-player tables (api.md, Multi-player tables): open one, sit, leave, open coups.

A coup is a round like any other: bets, the deal and choices go through the round
routes (infra/http/routes/rounds.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse

from domain import errors as e
from domain.application import CasinoApplication
from domain.tables.table import Table
from infra.http.answers import MultiPlayerTable
from infra.http.answers_rounds import Round
from infra.http.auth import READ
from infra.http.bodies import Leaving, NewCoup, NewTable, PuttingUpTheBank, Seating
from infra.http.contract import answers
from infra.http.idempotency import Command, service_command
from infra.http.reading import app_of
from infra.http.responses import FastJSONResponse
from infra.http.views.rounds import round_view
from infra.http.views.tables import table_view

router = APIRouter(prefix="/v1/tables", tags=["multi-player tables"])
TableId = Annotated[str, Path(max_length=80, description="issued by the server")]
AT_A_TABLE = (e.UnknownTable, e.UnknownPlayer, e.RoundInterrupted)


def _table(app: CasinoApplication) -> Callable[[Table], dict[str, Any]]:
    """How a table is answered: with its coup in play, if any, as a round, as the
    command left it."""

    def view(table: Table) -> dict[str, Any]:
        coup = round_view(app.round_as_answered(table.round_id)) if table.round_id else None
        return table_view(table, coup)

    return view


@router.post(
    "", **answers(201, MultiPlayerTable, e.UnknownTableGame, e.InvalidLimits, e.InvalidAmount)
)
async def open_table(
    body: NewTable, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = await command.run(
        app.open_table, _table(app), body.game, body.mode, body.bet_limits(), body.bank_limits()
    )
    return command.respond(outcome, 201)


@router.get(
    "/{table_id}", dependencies=[Depends(READ)], **answers(200, MultiPlayerTable, e.UnknownTable)
)
def get_table(table_id: TableId, request: Request) -> FastJSONResponse:
    table, coup = app_of(request).table_with_round(table_id)
    return FastJSONResponse(table_view(table, None if coup is None else round_view(coup)))


@router.post(
    "/{table_id}/seats",
    **answers(
        201,
        MultiPlayerTable,
        *AT_A_TABLE,
        e.UnknownSeat,
        e.SeatTaken,
        e.AlreadyAtTable,
        e.PlayerExcluded,
    ),
)
async def sit(
    table_id: TableId, body: Seating, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = await command.run(app.sit_at_table, _table(app), table_id, body.player_id, body.seat)
    return command.respond(outcome, 201)


@router.post(
    "/{table_id}/leave", **answers(200, MultiPlayerTable, *AT_A_TABLE, e.NotSeated, e.NotAtTable)
)
async def leave(
    table_id: TableId, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = await command.run(app.leave_seat, _table(app), table_id, body.player_id)
    return command.respond(outcome, 200)


@router.post(
    "/{table_id}/coups",
    **answers(
        201, Round, e.UnknownTable, e.CoupInProgress, e.NoBank, e.TestModeDisabled, e.InvalidShoe
    ),
)
async def open_coup(
    table_id: TableId,
    request: Request,
    body: NewCoup | None = None,
    command: Command = Depends(service_command),
) -> JSONResponse:
    shoe = body.shoe if body is not None else None
    outcome = await command.run(app_of(request).open_coup, round_view, table_id, shoe)
    return command.respond(outcome, 201)


# The bank, at a player-banked table (rules.md 2.3, 2.4).


@router.post(
    "/{table_id}/bank",
    **answers(
        201,
        MultiPlayerTable,
        *AT_A_TABLE,
        e.NotOfferedTheBank,
        e.PlayerExcluded,
        e.LossLimitExceeded,  # a banker past it may put up no other bank (rules.md 7)
        e.BankOutOfLimits,
        e.InsufficientFunds,
        e.BonusNotAllowed,
        e.BalanceLimitExceeded,
        e.InvalidAmount,
        e.InvalidStake,
        e.CoupInProgress,
        e.NotSeated,
        e.HouseBanked,
    ),
)
async def put_up_bank(
    table_id: TableId,
    body: PuttingUpTheBank,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    app = app_of(request)
    outcome = await command.run(app.put_up_bank, _table(app), table_id, body.player_id, body.cents)
    return command.respond(outcome, 201)


@router.post(
    "/{table_id}/bank/decline",
    **answers(200, MultiPlayerTable, *AT_A_TABLE, e.NotOfferedTheBank, e.NotSeated, e.HouseBanked),
)
async def decline_bank(
    table_id: TableId, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = await command.run(app.decline_bank, _table(app), table_id, body.player_id)
    return command.respond(outcome, 200)


@router.post(
    "/{table_id}/bank/withdraw",
    **answers(200, MultiPlayerTable, *AT_A_TABLE, e.NotTheBanker, e.CoupInProgress, e.HouseBanked),
)
async def withdraw_bank(
    table_id: TableId, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = await command.run(app.withdraw_bank, _table(app), table_id, body.player_id)
    return command.respond(outcome, 200)
