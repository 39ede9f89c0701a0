"""Third-party games (api.md, "Third-party games: the seamless wallet"): the casino's
side (register a provider, rotate its secrets, open a game session, reconcile), and
the calls a provider makes, each signed (infra/http/provider_calls.py)."""

from __future__ import annotations

import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from domain.errors import (
    BalanceLimitExceeded,
    BonusMaxBet,
    DuplicateTransaction,
    InsufficientFunds,
    InvalidAmount,
    InvalidProvider,
    InvalidToken,
    LossLimitExceeded,
    NoBetInRound,
    PlayerExcluded,
    ProviderExists,
    RoundClosed,
    RoundTransactionsExceeded,
    TokenExpired,
    TransactionRolledBack,
    UnknownPlayer,
    UnknownProvider,
)
from domain.money import parse_limit
from domain.providers.provider import PROVIDER_ID_PATTERN
from domain.providers.steps import Call
from infra.http import answers_providers as a
from infra.http.auth import REPORT
from infra.http.bodies import cents_of
from infra.http.contract import Refusal, answers
from infra.http.dates import Day
from infra.http.idempotency import Command, operator_command, service_command
from infra.http.negotiation import csv_answer, wants_csv
from infra.http.provider_bodies import (
    BalanceCall,
    BetCall,
    EndRoundCall,
    NewGameSession,
    NewProvider,
    ProviderSecrets,
    RollbackCall,
    WinCall,
)
from infra.http.provider_calls import SignedCall, signed_call
from infra.http.reading import app_of, min_position, projected
from infra.http.responses import FastJSONResponse
from infra.http.routes.players import PlayerId
from infra.http.views.providers import (
    balance_view,
    bet_view,
    call_view,
    ended_view,
    provider_view,
    session_view,
)
from projections import provider_transactions

router = APIRouter(tags=["third-party games"])
wallet_router = APIRouter(prefix="/v1/wallet/{provider_id}", tags=["third-party games"])
ProviderId = Annotated[
    str, Path(pattern=PROVIDER_ID_PATTERN.pattern, description="the provider's id")
]
# What any provider's call can meet besides its own refusals: the signature, the
# body, the token, and a store that cannot save.
SIGNED: tuple[Refusal, ...] = (
    (401, "invalid_signature"),
    (400, "malformed_json"),
    (422, "invalid_body"),
    (503, "concurrent_update"),
    (503, "log_tampered"),
    (503, "seal_key_retired"),
    InvalidToken,
)
# And a call keyed by its transaction id: the receipt, and an amount.
CALL: tuple[Refusal, ...] = (
    *SIGNED,
    (422, "idempotency_key_expired"),
    (503, "receipt_unsealed"),
    InvalidAmount,
)


@router.post("/v1/providers", **answers(201, a.Provider, ProviderExists, InvalidProvider))
async def register_provider(
    body: NewProvider, request: Request, command: Command = Depends(operator_command)
) -> JSONResponse:
    """Register a game provider: its secrets sign its calls, and are never shown again."""
    if await run_in_threadpool(request.app.state.provider_elsewhere, body.provider_id):
        # Another tenant's (rules.md 11): a provider's calls find their tenant by its id.
        raise ProviderExists(f"provider {body.provider_id} is already registered")
    outcome = await command.run(
        app_of(request).register_provider,
        provider_view,
        body.provider_id,
        body.name,
        body.secrets,
        body.bonus_allowed,
        body.theoretical_rtp,
    )
    return command.respond(outcome, 201)


@router.put(
    "/v1/providers/{provider_id}/secrets",
    **answers(200, a.Provider, UnknownProvider, InvalidProvider),
)
async def rotate_secrets(
    provider_id: ProviderId,
    body: ProviderSecrets,
    request: Request,
    command: Command = Depends(operator_command),
) -> JSONResponse:
    """The provider's secrets from now on: list the old one beside the new while the
    provider moves over, then the new one alone."""
    outcome = await command.run(
        app_of(request).rotate_provider_secrets, provider_view, provider_id, body.secrets
    )
    # This server signs with the new secrets at once; others within SECRETS_KEPT_SECONDS.
    request.app.state.provider_secrets.pop(provider_id, None)
    return command.respond(outcome, 200)


@router.post(
    "/v1/players/{player_id}/game-sessions",
    **answers(201, a.GameSession, UnknownPlayer, UnknownProvider),
)
async def open_game_session(
    player_id: PlayerId,
    body: NewGameSession,
    request: Request,
    command: Command = Depends(service_command),
) -> JSONResponse:
    """Open a player's session with a provider's game; hand its token to the provider."""
    # The token is the session's credential: its receipt keeps it sealed.
    outcome = await command.sealing("token").run(
        app_of(request).open_game_session,
        session_view,
        player_id,
        body.provider_id,
        body.game_id,
        body.mode,
    )
    return command.respond(outcome, 201)


@router.get(
    "/v1/providers/{provider_id}/transactions",
    dependencies=[Depends(REPORT), Depends(min_position)],
    **answers(200, a.ProviderTransactions, UnknownProvider, also=("text/csv",)),
)
def transactions(
    request: Request,
    provider_id: ProviderId,
    from_: Annotated[Day | None, Query(alias="from")] = None,
    to: Annotated[Day | None, Query()] = None,
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=provider_transactions.PAGE_MAX)] = 500,
) -> Response:
    """Every call of the provider in the period (days, UTC, both included; by default
    from the first to today), oldest first, a page at a time: for the daily
    reconciliation. `Accept: text/csv` for CSV."""
    app_of(request).provider(provider_id)  # 404 unknown_provider
    first, last = from_ or datetime.date.min, to or datetime.datetime.now(datetime.UTC).date()
    with projected(request) as cursor:
        found = provider_transactions.page(cursor, provider_id, first, last, after, limit)
    if wants_csv(request):
        return csv_answer(provider_transactions.csv_text(found.rows))
    return FastJSONResponse(found.answer(provider_id))


@wallet_router.post("/balance", **answers(200, a.ProviderBalance, *SIGNED, TokenExpired))
async def balance(
    body: BalanceCall, request: Request, call: SignedCall = Depends(signed_call)
) -> JSONResponse:
    """The player's balance (a read: it writes nothing); a live token."""
    read = app_of(request).provider_wallet
    wallet = await run_in_threadpool(read, call.provider_id, body.token)
    return FastJSONResponse(balance_view(wallet))


@wallet_router.post(
    "/bet",
    **answers(
        200,
        a.StakeTaken,
        *CALL,
        TokenExpired,
        InsufficientFunds,
        BonusMaxBet,
        TransactionRolledBack,
        RoundClosed,
        DuplicateTransaction,
        PlayerExcluded,
        LossLimitExceeded,
        RoundTransactionsExceeded,
        keyed=True,
    ),
)
async def bet(body: BetCall, request: Request, call: SignedCall = Depends(signed_call)) -> Any:
    """Take a stake at once (nothing held), for a round of the provider's: cash first,
    then the active bonus where the provider allows bonus money."""
    amount = cents_of(body.amount)
    return await _keyed(
        call, body.token, body.transaction_id, app_of(request).provider_bet, bet_view,
        body.round_id, body.game_id, amount,
    )  # fmt: skip


@wallet_router.post(
    "/win",
    **answers(
        200,
        a.WalletCredited,
        *CALL,
        NoBetInRound,
        RoundClosed,
        DuplicateTransaction,
        BalanceLimitExceeded,
        RoundTransactionsExceeded,
        keyed=True,
    ),
)
async def win(body: WinCall, request: Request, call: SignedCall = Depends(signed_call)) -> Any:
    """Credit a win (it may be "0.00") in a round where the player bet; an expired
    token is accepted: a provider retries a win until it lands."""
    amount = parse_limit(body.amount)  # "0.00" too
    return await _keyed(
        call, body.token, body.transaction_id, app_of(request).provider_win, call_view,
        body.round_id, amount, body.bet_transaction_id,
    )  # fmt: skip


@wallet_router.post(
    "/rollback",
    **answers(
        200,
        a.WalletCredited,
        *CALL,
        RoundClosed,
        DuplicateTransaction,
        BalanceLimitExceeded,
        keyed=True,
    ),
)
async def rollback(
    body: RollbackCall, request: Request, call: SignedCall = Depends(signed_call)
) -> Any:
    """Give back what a bet took; a bet never seen leaves a tombstone that refuses it."""
    return await _keyed(
        call, body.token, body.transaction_id, app_of(request).provider_rollback, call_view,
        body.bet_transaction_id,
    )  # fmt: skip


@wallet_router.post(
    "/end-round",
    **answers(200, a.EndedRound, *SIGNED),
)
async def end_round(
    body: EndRoundCall, request: Request, call: SignedCall = Depends(signed_call)
) -> Any:
    """End the player's round: no bet or win may follow. Ending it again succeeds."""
    end = app_of(request).provider_end_round
    outcome = await run_in_threadpool(end, call.provider_id, body.token, body.round_id)
    assert outcome.result is not None
    return FastJSONResponse(ended_view(outcome.result))


async def _keyed(
    signed: SignedCall, token: str, transaction_id: str, bound: Any, view: Any, *args: Any
) -> JSONResponse:
    """Run a provider's call once per transaction id (its receipt in the save that moves
    the money): a repeat gets the first answer, with Idempotent-Replayed."""
    command = signed.command(transaction_id)
    call = Call(signed.provider_id, token, transaction_id)
    outcome = await command.run(bound, view, call, *args)
    return command.respond(outcome, 200)
