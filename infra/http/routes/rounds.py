"""Rounds of every game (api.md, Rounds): open, bet, deal, act, read, audit."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse

from domain import errors as e
from domain.ids import PLAYER_ID_PATTERN
from domain.providers.round import ProviderRound
from infra.audit.decoding import stored_event_decoder
from infra.http.answers import AuditTrail
from infra.http.answers_rounds import Round
from infra.http.auth import READ
from infra.http.bodies import (
    Banco,
    NewAction,
    NewBaccaratRound,
    NewBet,
    NewBlackjackRound,
    cents_of,
)
from infra.http.contract import answers
from infra.http.idempotency import Command, service_command
from infra.http.reading import app_of, min_position, projected
from infra.http.responses import FastJSONResponse
from infra.http.views.providers import external_round_view, provider_audit_view
from infra.http.views.rounds import audit_view, dealt_view, round_view
from infra.store.schema import log_table
from projections import round_trail

router = APIRouter(tags=["rounds"])
PlayerQuery = Query(
    default=None,
    pattern=PLAYER_ID_PATTERN.pattern,
    description="at a multi-player table: whose stake to take back (required there)",
)
RoundId = Annotated[str, Path(max_length=80, description="issued by the server")]
SpotOrBox = Annotated[
    str, Path(max_length=40, description="baccarat: the spot; blackjack: the box, 1-5")
]
# Every command on a round may find it unknown, over, or interrupted (rules.md 4).
ON_A_ROUND = (e.UnknownRound, e.RoundNotOpen, e.RoundInterrupted)
STAKING = (
    e.LossLimitExceeded,  # rules.md 7
    e.PlayerExcluded,
    e.InvalidAmount,
    e.InvalidStake,
    e.BelowTableMinimum,
    e.AboveTableMaximum,
    e.InsufficientFunds,
    e.BalanceLimitExceeded,
    e.BonusNotAllowed,  # rules.md 9
    e.BonusMaxBet,
    e.BonusSurebet,
)
# At a multi-player table, a bet names its player (rules.md 2.2-2.4).
AT_A_TABLE = (e.NotSeated, e.BankerCannotBet, e.BankCovered, e.WrongSide, e.UnknownPlayer)
OPENING = (e.UnknownPlayer, e.TestModeDisabled, e.InvalidShoe, e.RoundInterrupted)


@router.post("/v1/baccarat/rounds", **answers(201, Round, *OPENING))
async def open_baccarat_round(
    body: NewBaccaratRound, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Open a house baccarat round for bets, its shoe committed (`seed_commitment`)."""
    outcome = await command.run(
        app_of(request).open_house_round, round_view, body.player_id, body.mode, body.shoe
    )
    return command.respond(outcome, 201)


@router.post("/v1/blackjack/rounds", **answers(201, Round, *OPENING, e.UnknownHall))
async def open_blackjack_round(
    body: NewBlackjackRound, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Open a blackjack round in a hall for bets, its shoe committed."""
    outcome = await command.run(
        app_of(request).open_blackjack_round,
        round_view,
        body.player_id,
        body.mode,
        body.hall,
        body.shoe,
    )
    return command.respond(outcome, 201)


@router.post(
    "/v1/rounds/{round_id}/bets",
    **answers(201, Round, *ON_A_ROUND, *STAKING, *AT_A_TABLE, e.UnknownSpot, e.InvalidBox),
)
async def place_bet(
    round_id: RoundId, body: NewBet, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Bet on a spot (baccarat) or a box (blackjack); the stake is held."""
    outcome = await command.run(
        app_of(request).place_bet,
        round_view,
        round_id,
        body.target,
        cents_of(body.amount),
        body.player_id,
    )
    return command.respond(outcome, 201)


@router.delete(
    "/v1/rounds/{round_id}/bets/{spot_or_box}",
    **answers(
        200,
        Round,
        *ON_A_ROUND,
        e.UnknownSpot,
        e.InvalidBox,
        e.NoStakeOnSpot,
        e.NoStakeOnBox,
        e.BelowTableMinimum,
        e.BancoCalled,
        e.NotSeated,  # a player_id other than a one-player round's own
    ),
)
async def remove_bet(
    round_id: RoundId,
    spot_or_box: SpotOrBox,
    request: Request,
    player_id: str | None = PlayerQuery,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """Take back the whole stake of one spot or box before the deal."""
    outcome = await command.run(
        app_of(request).remove_bet, round_view, round_id, spot_or_box, player_id
    )
    return command.respond(outcome, 200)


@router.delete(
    "/v1/rounds/{round_id}/bets",
    **answers(200, Round, *ON_A_ROUND, e.NotSeated, e.NoBets, e.BancoCalled),
)
async def cancel_bets(
    round_id: RoundId,
    request: Request,
    player_id: str | None = PlayerQuery,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """Take back every stake of the round before the deal."""
    outcome = await command.run(app_of(request).cancel_bets, round_view, round_id, player_id)
    return command.respond(outcome, 200)


@router.post(
    "/v1/rounds/{round_id}/repeat-bets",
    **answers(201, Round, *ON_A_ROUND, *STAKING, e.NoPreviousBets, e.BetsAlreadyPlaced),
)
async def repeat_bets(
    round_id: RoundId, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Bet again what the player bet in their last round in that hall and mode (blackjack)."""
    outcome = await command.run(app_of(request).repeat_bets, round_view, round_id)
    return command.respond(outcome, 201)


@router.post(
    "/v1/rounds/{round_id}/deal",
    **answers(
        200,
        Round,
        *ON_A_ROUND,
        e.NoBets,
        e.BelowTableMinimum,
        e.InsufficientFunds,
        e.PlayerExcluded,  # an excluded player's own house round waits for its timeout
    ),
)
async def deal(
    round_id: RoundId, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Deal: baccarat plays the whole coup and settles; blackjack deals and waits for decisions."""
    outcome = await command.run(app_of(request).deal, dealt_view, round_id)
    return command.respond(outcome, 200)


@router.post(
    "/v1/rounds/{round_id}/actions",
    **answers(
        200,
        Round,
        *ON_A_ROUND,
        e.IllegalAction,
        e.InsufficientFunds,
        e.BalanceLimitExceeded,
        e.BonusMaxBet,  # a double or a split is a bet too (rules.md 9)
        e.BonusSurebet,
        e.InvalidBox,
        e.NotYourDecision,
        e.LossLimitExceeded,
        e.PlayerExcluded,
        e.NotSeated,  # a player_id other than a one-player round's own
    ),
)
async def act(
    round_id: RoundId,
    body: NewAction,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """A blackjack decision for a box and hand."""
    outcome = await command.run(
        app_of(request).act, round_view, round_id, body.box, body.hand, body.action, body.player_id
    )
    return command.respond(outcome, 200)


@router.post(
    "/v1/rounds/{round_id}/banco",
    **answers(
        201,
        Round,
        *ON_A_ROUND,
        e.BancoRefused,
        e.HouseBanked,
        e.InsufficientFunds,
        e.BonusNotAllowed,
        e.BalanceLimitExceeded,
        e.NotSeated,
        e.LossLimitExceeded,
        e.PlayerExcluded,
    ),
)
async def banco(
    round_id: RoundId, body: Banco, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """At a player-banked table: the caller covers the whole bank, other bets returned."""
    outcome = await command.run(app_of(request).call_banco, round_view, round_id, body.player_id)
    return command.respond(outcome, 201)


@router.get(
    "/v1/rounds/{round_id}", dependencies=[Depends(READ)], **answers(200, Round, e.UnknownRound)
)
def get_round(round_id: RoundId, request: Request) -> FastJSONResponse:
    """The round, card by card (no secret while it is not over); a provider's, its calls."""
    app = app_of(request)
    external = app.provider_round(round_id)  # a provider's round (rules.md 10), or None
    if external is not None:
        return FastJSONResponse(external_round_view(external))
    return FastJSONResponse(round_view(app.round(round_id)))


@router.get(
    "/v1/rounds/{round_id}/audit",
    dependencies=[Depends(READ), Depends(min_position)],
    **answers(200, AuditTrail, e.UnknownRound),
)
def get_audit(round_id: RoundId, request: Request) -> dict[str, Any]:
    """Every event of the round in log order, the wallets' included."""
    app = app_of(request)
    external = app.provider_round(round_id)  # a provider's round (rules.md 10), or None
    round_ = app.round(round_id) if external is None else external
    log = log_table(request.app.state.store.database.dialect)
    with projected(request) as cursor:
        trail = round_trail.trail(cursor, round_.round_id, log, stored_event_decoder(app.mapper))
    if isinstance(round_, ProviderRound):
        return provider_audit_view(round_, trail)
    return audit_view(round_, trail)
