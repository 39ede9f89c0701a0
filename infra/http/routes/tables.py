"""Multi-player tables (api.md, Multi-player tables): open one, sit, leave, open coups.

A coup is a round like any other: bets, the deal and choices go through the round
routes (infra/http/routes/rounds.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from domain.application import CasinoApplication
from domain.tables.table import Table
from infra.http.auth import READ
from infra.http.bodies import Leaving, NewCoup, NewTable, PuttingUpTheBank, Seating, cents_of
from infra.http.idempotency import Command, service_command
from infra.http.reading import app_of
from infra.http.views.rounds import round_view
from infra.http.views.tables import table_view

router = APIRouter(prefix="/v1/tables", tags=["multi-player tables"])


def _table(app: CasinoApplication) -> Callable[[Table], dict[str, Any]]:
    """How a table is answered: with its coup in play, if any, as a round."""

    def view(table: Table) -> dict[str, Any]:
        coup = round_view(app.round(table.round_id)) if table.round_id else None
        return table_view(table, coup)

    return view


@router.post("", status_code=201)
def open_table(
    body: NewTable, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.open_table.with_receipt(
        command.receipt(_table(app)), body.game, body.mode, body.bet_limits(), body.bank_limits()
    )
    return command.respond(outcome, 201)


@router.get("/{table_id}", dependencies=[Depends(READ)])
def get_table(table_id: str, request: Request) -> dict[str, Any]:
    app = app_of(request)
    return _table(app)(app.table(table_id))


@router.post("/{table_id}/seats", status_code=201)
def sit(
    table_id: str, body: Seating, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.sit_at_table.with_receipt(
        command.receipt(_table(app)), table_id, body.player_id, body.seat
    )
    return command.respond(outcome, 201)


@router.post("/{table_id}/leave")
def leave(
    table_id: str, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.leave_seat.with_receipt(command.receipt(_table(app)), table_id, body.player_id)
    return command.respond(outcome, 200)


@router.post("/{table_id}/coups", status_code=201)
def open_coup(
    table_id: str,
    request: Request,
    body: NewCoup | None = None,
    command: Command = Depends(service_command),
) -> JSONResponse:
    shoe = body.shoe if body is not None else None
    outcome = app_of(request).open_coup.with_receipt(command.receipt(round_view), table_id, shoe)
    return command.respond(outcome, 201)


# The bank, at a player-banked table (rules.md 2.3, 2.4).


@router.post("/{table_id}/bank", status_code=201)
def put_up_bank(
    table_id: str,
    body: PuttingUpTheBank,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    app = app_of(request)
    outcome = app.put_up_bank.with_receipt(
        command.receipt(_table(app)), table_id, body.player_id, cents_of(body.amount)
    )
    return command.respond(outcome, 201)


@router.post("/{table_id}/bank/decline")
def decline_bank(
    table_id: str, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.decline_bank.with_receipt(command.receipt(_table(app)), table_id, body.player_id)
    return command.respond(outcome, 200)


@router.post("/{table_id}/bank/withdraw")
def withdraw_bank(
    table_id: str, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.withdraw_bank.with_receipt(command.receipt(_table(app)), table_id, body.player_id)
    return command.respond(outcome, 200)
