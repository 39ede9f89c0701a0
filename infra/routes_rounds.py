"""Rounds of every game (API.md, Rounds)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import Field, model_validator

from infra.auth import READ
from infra.idempotency import Command, service_command
from infra.projected import min_position, projected
from infra.routes_players import Body, app_of, cents_of
from infra.views_rounds import audit_view, round_view
from projections import round_trail

router = APIRouter(tags=["rounds"])
ShoeField = Field(
    default=None,
    description="certification mode only: the first cards of the shoe, in dealing order",
    examples=[["10", "K", "3", "10", "10", "Q"]],
    max_length=416,
)


class NewBaccaratRound(Body):
    player_id: str = Field(examples=["alice"])
    mode: Literal["real", "play"]
    shoe: list[str] | None = ShoeField


class NewBet(Body):
    spot: str | None = Field(default=None, description="baccarat: player, banker or tie")
    box: int | None = Field(default=None, description="blackjack: box 1-5")
    amount: str = Field(examples=["10.00"])

    @model_validator(mode="after")
    def _one_target(self) -> NewBet:
        if (self.spot is None) == (self.box is None):
            raise ValueError("give either spot (baccarat) or box (blackjack)")
        return self

    @property
    def target(self) -> str:
        return self.spot if self.spot is not None else str(self.box)


@router.post("/v1/baccarat/rounds", status_code=201)
def open_baccarat_round(
    body: NewBaccaratRound, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).open_house_round(
        body.player_id, body.mode, body.shoe, command.receipt(201, round_view)
    )
    return command.respond(outcome)


@router.post("/v1/rounds/{round_id}/bets", status_code=201)
def place_bet(
    round_id: str, body: NewBet, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).place_bet(
        round_id, body.target, cents_of(body.amount), command.receipt(201, round_view)
    )
    return command.respond(outcome)


@router.delete("/v1/rounds/{round_id}/bets/{spot_or_box}")
def remove_bet(
    round_id: str, spot_or_box: str, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).remove_bet(round_id, spot_or_box, command.receipt(200, round_view))
    return command.respond(outcome)


@router.post("/v1/rounds/{round_id}/deal")
def deal(
    round_id: str, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).deal(round_id, command.receipt(200, round_view))
    return command.respond(outcome)


@router.get("/v1/rounds/{round_id}", dependencies=[Depends(READ)])
def get_round(round_id: str, request: Request) -> dict[str, Any]:
    return round_view(app_of(request).round(round_id))


@router.get("/v1/rounds/{round_id}/audit", dependencies=[Depends(READ), Depends(min_position)])
def get_audit(round_id: str, request: Request) -> dict[str, Any]:
    round_ = app_of(request).round(round_id)
    with projected(request) as cursor:
        trail = round_trail.trail(cursor, str(round_.id))
    return audit_view(round_, trail)


# Blackjack (RULES.md 3).


class NewBlackjackRound(Body):
    player_id: str = Field(examples=["alice"])
    mode: Literal["real", "play"]
    hall: str = Field(max_length=40, description="a configured hall: 1, 2 or vip", examples=["1"])
    shoe: list[str] | None = ShoeField


class NewAction(Body):
    box: int = Field(ge=1, le=5, description="the box in play, 1-5")
    hand: int = Field(default=0, ge=0, le=1, description="0, or 1 for the second split hand")
    action: Literal["hit", "stand", "double", "split", "insurance", "no_insurance", "even_money"]


@router.post("/v1/blackjack/rounds", status_code=201)
def open_blackjack_round(
    body: NewBlackjackRound, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).open_blackjack_round(
        body.player_id, body.mode, body.hall, body.shoe, command.receipt(201, round_view)
    )
    return command.respond(outcome)


@router.post("/v1/rounds/{round_id}/repeat-bets", status_code=201)
def repeat_bets(
    round_id: str, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).repeat_bets(round_id, command.receipt(201, round_view))
    return command.respond(outcome)


@router.delete("/v1/rounds/{round_id}/bets")
def cancel_bets(
    round_id: str, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).cancel_bets(round_id, command.receipt(200, round_view))
    return command.respond(outcome)


@router.post("/v1/rounds/{round_id}/actions")
def act(
    round_id: str, body: NewAction, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    outcome = app_of(request).act(
        round_id, body.box, body.hand, body.action, command.receipt(200, round_view)
    )
    return command.respond(outcome)
