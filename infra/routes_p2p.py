"""P2P baccarat: play as the dealer (API.md, P2P baccarat)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from domain.application import CasinoApplication
from domain.baccarat.p2p import Table
from domain.money import format_cents
from infra.auth import READ
from infra.idempotency import Command, service_command
from infra.routes_players import Body, app_of
from infra.routes_rounds import ShoeField
from infra.views_rounds import round_view

router = APIRouter(prefix="/v1/p2p", tags=["p2p baccarat"])


class NewDealer(Body):
    player_id: str
    mode: Literal["real", "play"]
    table_type: str = Field(examples=["II"], description="I, II or III")
    auto_confirm: bool = False


class NewPlayer(Body):
    player_id: str
    mode: Literal["real", "play"]
    table_type: str = Field(examples=["II"])


class Confirmation(Body):
    shoe: list[str] | None = ShoeField


class Leaving(Body):
    player_id: str


def table_view(app: CasinoApplication, table: Table) -> dict[str, Any]:
    kind = app.table_type(table.table_type)
    return {
        "table_id": table.table_id,
        "status": table.status,
        "mode": table.mode,
        "table_type": table.table_type,
        "limits": {
            "min": format_cents(kind.stake_min_cents),
            "max": format_cents(kind.stake_max_cents),
        },
        "dealer_points_min": kind.points_min,
        "dealer_worst_case": format_cents(app.games.p2p.worst_case_cents(kind)),
        "auto_confirm": table.auto_confirm,
        "dealer": _person(app, table.dealer_id),
        "player": _person(app, table.player_id) if table.player_id else None,
        "round_id": table.round_id,
        "rounds_played": table.rounds_played,
        "notice": table.notice,
    }


def _person(app: CasinoApplication, player_id: str) -> dict[str, str]:
    return {"player_id": player_id, "display_name": app.player(player_id).display_name}


@router.post("/dealers", status_code=201)
def sit_as_dealer(
    body: NewDealer, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.sit_as_dealer(
        body.player_id,
        body.mode,
        body.table_type,
        body.auto_confirm,
        command.receipt(201, lambda table: table_view(app, table)),
    )
    return command.respond(outcome)


@router.post("/players", status_code=201)
def join_as_player(
    body: NewPlayer, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.join_as_player(
        body.player_id,
        body.mode,
        body.table_type,
        command.receipt(201, lambda table: table_view(app, table)),
    )
    return command.respond(outcome)


@router.post("/tables/{table_id}/confirm", status_code=201)
def confirm(
    table_id: str,
    request: Request,
    body: Confirmation | None = None,
    command: Command = Depends(service_command),
) -> JSONResponse:
    shoe = body.shoe if body is not None else None
    outcome = app_of(request).confirm(table_id, shoe, command.receipt(201, round_view))
    return command.respond(outcome)


@router.post("/tables/{table_id}/leave")
def leave(
    table_id: str, body: Leaving, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    app = app_of(request)
    outcome = app.leave_table(
        table_id, body.player_id, command.receipt(200, lambda table: table_view(app, table))
    )
    return command.respond(outcome)


@router.get("/tables/{table_id}", dependencies=[Depends(READ)])
def get_table(table_id: str, request: Request) -> dict[str, Any]:
    app = app_of(request)
    table = app.table(table_id)
    view = table_view(app, table)
    view["current_round"] = round_view(app.round(table.round_id)) if table.round_id else None
    return view
