"""Players and wallets (api.md, Players and wallets)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse

from domain.blackjack.interruptions import Reconnection
from domain.errors import (
    BalanceLimitExceeded,
    DepositLimitExceeded,
    HistoryUnavailable,
    InsufficientFunds,
    InvalidAmount,
    InvalidPointsChange,
    PlayerExcluded,
    PlayerExists,
    UnknownPlayer,
)
from domain.ids import PLAYER_ID_PATTERN
from domain.rounds import check_history_available
from infra.http import answers as a
from infra.http.auth import READ
from infra.http.bodies import MoneyMovement, NewPlayer, PointsAdjustment, cents_of
from infra.http.cash_out import witness_before_cash_out, witnessed
from infra.http.contract import answers
from infra.http.idempotency import Command, operator_command, service_command
from infra.http.reading import app_of, min_position, projected
from infra.http.responses import FastJSONResponse
from infra.http.views.providers import external_round_view
from infra.http.views.rounds import round_view
from infra.http.views.wallets import (
    history_entry_view,
    ledger_entry_view,
    movement_view,
    player_view,
    wallet_view,
)
from projections import dealer_points, game_history, ledger, open_rounds

router = APIRouter(prefix="/v1/players", tags=["players and wallets"])
LEDGER_LIMIT_MAX = 500
VERSION_MAX = 2**62  # Beyond any real event version, within SQLite's and PostgreSQL's integers.
Mode = Literal["real", "play"]
# The path's player id is checked by the domain too; declared here for the document.
PlayerId = Annotated[
    str,
    Path(
        pattern=PLAYER_ID_PATTERN.pattern,
        description="1-64 letters, digits, '_' or '-'",
        examples=["alice"],
    ),
]


@router.post("", **answers(201, a.Player, PlayerExists))
async def register_player(
    body: NewPlayer, request: Request, command: Command = Depends(service_command)
) -> JSONResponse:
    """Register a player; both wallets, real and play money, are opened with them."""
    outcome = await command.run(
        app_of(request).register_player, player_view, body.player_id, body.display_name
    )
    return command.respond(outcome, 201)


@router.post(
    "/{player_id}/deposits",
    **answers(
        201,
        a.Movement,
        UnknownPlayer,
        InvalidAmount,
        BalanceLimitExceeded,
        DepositLimitExceeded,
        PlayerExcluded,
    ),
)
async def deposit(
    player_id: PlayerId,
    body: MoneyMovement,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """Deposit money into a wallet (from the cashier)."""
    outcome = await command.run(
        app_of(request).deposit, movement_view, player_id, body.mode, cents_of(body.amount)
    )
    return command.respond(outcome, 201)


@router.post(
    "/{player_id}/withdrawals",
    **answers(
        201,
        a.Movement,
        UnknownPlayer,
        InvalidAmount,
        InsufficientFunds,
        (503, "witness_unavailable"),
    ),
)
async def withdraw(
    player_id: PlayerId,
    body: MoneyMovement,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """Withdraw money from a wallet; never more than is available. Answered once the
    witness has acknowledged a checkpoint covering it (503 witness_unavailable else)."""
    witness = witness_before_cash_out(request)
    outcome = await command.run(
        app_of(request).withdraw, movement_view, player_id, body.mode, cents_of(body.amount)
    )
    await witnessed(witness, outcome)
    return command.respond(outcome, 201)


@router.get("/{player_id}", dependencies=[Depends(READ)], **answers(200, a.Player, UnknownPlayer))
def get_player(request: Request, player_id: PlayerId) -> FastJSONResponse:
    """The player."""
    return FastJSONResponse(player_view(app_of(request).player(player_id)))


@router.get(
    "/{player_id}/wallets/{mode}",
    dependencies=[Depends(READ)],
    **answers(200, a.Wallet, UnknownPlayer),
)
def get_wallet(request: Request, mode: Mode, player_id: PlayerId) -> FastJSONResponse:
    """A wallet as it is now: balance, held in open rounds, available, dealer points."""
    return FastJSONResponse(wallet_view(app_of(request).wallet(player_id, mode)))


@router.get(
    "/{player_id}/ledger",
    dependencies=[Depends(READ), Depends(min_position)],
    **answers(200, a.LedgerPage, UnknownPlayer),
)
def get_ledger(
    request: Request,
    player_id: PlayerId,
    mode: Mode = "real",
    limit: int = Query(default=100, ge=1, le=LEDGER_LIMIT_MAX),
    after: int = Query(default=0, ge=0, le=VERSION_MAX, description="entry_id to continue after"),
) -> dict[str, Any]:
    """A page of the wallet's ledger, oldest first; pass `next_after` back as `after`."""
    app_of(request).wallet(player_id, mode)  # Refuse unknown players first.
    with projected(request) as cursor:
        found = ledger.entries(cursor, player_id, mode, after, limit)
    entries = [ledger_entry_view(entry) for entry in found]
    next_after = entries[-1]["entry_id"] if len(entries) == limit else None
    return {"player_id": player_id, "mode": mode, "entries": entries, "next_after": next_after}


@router.get(
    "/{player_id}/dealer-points",
    dependencies=[Depends(READ), Depends(min_position)],
    **answers(200, a.DealerPoints, UnknownPlayer),
)
def get_dealer_points(request: Request, player_id: PlayerId, mode: Mode = "real") -> dict[str, Any]:
    """A wallet's dealer points and their latest 1,000 entries."""
    wallet = app_of(request).wallet(player_id, mode)
    with projected(request) as cursor:
        entries = dealer_points.entries(cursor, player_id, mode)
    return {"player_id": player_id, "mode": mode, "points": wallet.points, "entries": entries}


@router.post(
    "/{player_id}/dealer-points/adjustments",
    **answers(201, a.PointsAdjusted, UnknownPlayer, InvalidPointsChange),
)
async def adjust_dealer_points(
    player_id: PlayerId,
    body: PointsAdjustment,
    request: Request,
    command: Command = Depends(operator_command),
) -> JSONResponse:
    """An operator adjusts a wallet's dealer points, with a reason."""
    body.check()  # before the wallet is read
    outcome = await command.run(
        app_of(request).adjust_points,
        lambda wallet: {"player_id": player_id, "points": wallet.points},
        player_id,
        body.mode,
        body.change,
        body.reason,
    )
    return command.respond(outcome, 201)


@router.get(
    "/{player_id}/history",
    dependencies=[Depends(READ), Depends(min_position)],
    **answers(200, a.History, UnknownPlayer, HistoryUnavailable),
)
def get_history(
    request: Request,
    player_id: PlayerId,
    mode: Mode = "real",
    limit: int = Query(default=10, ge=1, le=game_history.ROUNDS_MAX),
) -> dict[str, Any]:
    """The last settled rounds, newest first, card by card, with balances before and after."""
    check_history_available(mode)
    app = app_of(request)
    app.wallet(player_id, mode)  # Refuse unknown players first.
    with projected(request) as cursor:
        results = game_history.recent(cursor, player_id, mode, limit)
    return {
        "player_id": player_id,
        "mode": mode,
        "rounds": [
            history_entry_view(result, _round_shown(app, result["round_id"]), player_id)
            for result in results
        ],
    }


def _round_shown(app: Any, round_id: str) -> dict[str, Any]:
    """A round of the history as GET /v1/rounds/{round_id} shows it, a provider's too."""
    external = app.provider_round(round_id)
    return (
        external_round_view(external) if external is not None else round_view(app.round(round_id))
    )


@router.post("/{player_id}/disconnect", **answers(200, a.Disconnection, UnknownPlayer))
async def disconnect(
    request: Request, player_id: PlayerId, command: Command = Depends(service_command)
) -> JSONResponse:
    """The upstream service lost this player: open P2P rounds are voided or go on,
    blackjack rounds in play are interrupted."""
    outcome = await command.run(
        app_of(request).disconnect,
        lambda affected: {"player_id": player_id, "affected_rounds": affected},
        player_id,
    )
    return command.respond(outcome, 200)


@router.post("/{player_id}/reconnect", **answers(200, a.Reconnection, UnknownPlayer))
def reconnect(
    request: Request, player_id: PlayerId, command: Command = Depends(service_command)
) -> JSONResponse:
    """The player is back: their open rounds, to resume. Baccarat rounds come from the
    read model; blackjack rounds in play, resumed ones included, from the command itself
    (the answer is shaped before the save, so the store does not show them resumed yet)."""
    app = app_of(request)
    with projected(request, whole_log=True) as cursor:
        round_ids = open_rounds.of_player(cursor, player_id)

    def answer(reconnection: Reconnection) -> dict[str, Any]:
        resumed = {round_.round_id: round_ for round_ in reconnection.blackjack_rounds}
        rounds = [round_view(app.round(rid)) for rid in round_ids if rid not in resumed]
        rounds += [round_view(round_) for round_ in resumed.values()]
        return {"player_id": player_id, "open_rounds": rounds}

    # A sync route, run in a worker thread: it reads the read models before the command.
    outcome = app.reconnect.with_receipt(command.receipt(answer), player_id)
    return command.respond(outcome, 200)
