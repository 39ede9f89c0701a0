"""What each third-party-game command does (rules.md 10): load, check, call the
aggregates; the application's methods call one of these, the seam saves it all in
one atomic save (with the call's receipt, keyed by the provider's transaction id).

A call's money moves only through the wallet: `Wallet.take_stake` for a bet,
`Wallet.credit` for a win or a rollback, against `casino:games:{provider_id}`. Where
the provider allows bonus money (rules.md 9), a bet takes cash first, then the active
bonus; a win and a rollback give the bonus share back where that bonus's money went,
and the round's end counts its stakes towards the bonus (`Wallet.count_wagering`).
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from uuid import UUID

from domain.bonus import Split
from domain.bonus_steps import wallet_at
from domain.errors import (
    DuplicateTransaction,
    InvalidToken,
    NoBetInRound,
    ProviderExists,
    TransactionRolledBack,
)
from domain.ids import check_mode
from domain.providers.provider import (
    GameSession,
    Provider,
    check_provider_id,
    check_rtp,
    check_secrets,
    games_account,
    load_provider,
    load_session,
    provider_uuid,
    secrets_context,
)
from domain.providers.round import (
    BY_PROVIDER,
    INACTIVE,
    OPEN,
    ProviderBet,
    ProviderRound,
    bet_uuid,
    round_uuid,
)
from domain.settings import ProviderSettings
from domain.unit import Unit
from domain.wallet import Wallet, load_wallet

NOTHING_USED = Split(0, 0)  # a win's or a rollback's answer: no stake taken


@dataclass(frozen=True)
class ProviderWallet:
    """A player's wallet as a provider sees it: the bonus its games may stake."""

    wallet: Wallet
    bonus_allowed: bool

    @property
    def bonus_cents(self) -> int:
        return self.wallet.third_party_bonus_cents(self.bonus_allowed)


@dataclass(frozen=True)
class WalletCall(ProviderWallet):
    """What a provider's bet, win or rollback answers: the wallet after it, and what a
    bet took from cash and from the bonus."""

    transaction_id: str
    used: Split = NOTHING_USED


@dataclass(frozen=True)
class Call:
    """A provider's bet, win or rollback as the wallet takes it: the provider, the game
    session's token, and the provider's transaction id, the call's idempotency key."""

    provider_id: str
    token: str
    transaction_id: str


@dataclass(frozen=True)
class OpenedSession:
    token: str
    session: GameSession


def register(
    unit: Unit,
    provider_id: str,
    name: str,
    secrets: list[str],
    bonus_allowed: bool,
    theoretical_rtp: str | None,
) -> Provider:
    check_provider_id(provider_id)
    if unit.find(Provider, provider_uuid(provider_id)) is not None:
        raise ProviderExists(f"provider {provider_id} is already registered")
    sealed = _sealed(unit, provider_id, secrets)
    provider = Provider(provider_id, name, bonus_allowed, sealed, check_rtp(theoretical_rtp))
    unit.add(provider)
    return provider


def rotate(unit: Unit, provider_id: str, secrets: list[str]) -> Provider:
    provider = load_provider(unit, provider_id)
    provider.rotate(_sealed(unit, provider_id, secrets))
    return provider


def open_session(
    unit: Unit,
    settings: ProviderSettings,
    now: datetime.datetime,
    token: str,
    player_id: str,
    provider_id: str,
    game_id: str,
    mode: str,
) -> OpenedSession:
    provider = load_provider(unit, provider_id)
    load_wallet(unit, player_id, check_mode(mode))  # 404 unknown_player
    at, lifetime, rtp = now.isoformat(), settings.session_seconds, provider.theoretical_rtp
    session = GameSession.open(
        token, provider_id, player_id, game_id, mode, at, lifetime, rtp, provider.bonus_allowed
    )
    unit.add(session)
    return OpenedSession(token, session)


def bet(
    unit: Unit,
    settings: ProviderSettings,
    now: datetime.datetime,
    call: Call,
    round_ref: str,
    game_id: str,
    amount_cents: int,
) -> WalletCall:
    provider_id, transaction_id = call.provider_id, call.transaction_id
    session = load_session(unit, provider_id, call.token)
    session.check_live(now)
    bet_key = bet_uuid(provider_id, transaction_id)
    # Usually neither exists yet (a slot's spin opens its round): one trip finds so.
    unit.read_ahead([bet_key, _round_key(session, round_ref)])
    earlier = unit.find(ProviderBet, bet_key)
    if earlier is not None and (earlier.tombstone or earlier.rolled_back_by is not None):
        raise TransactionRolledBack(f"bet {transaction_id} was rolled back: it stands refused")
    if earlier is not None:
        raise DuplicateTransaction(f"transaction {transaction_id} was already used")
    round_ = _round(unit, session, round_ref, game_id, now)
    round_.check_bet(transaction_id, now, settings.round_seconds)
    wallet = wallet_at(unit, now, session.player_id, session.mode)
    allowed = session.bonus_allowed
    under = allowed and round_.takes_bonus(wallet.active_bonus_id)
    bonus_id = wallet.active_bonus_id if under else None
    account = games_account(provider_id)
    taken = wallet.take_stake(round_.round_id, transaction_id, amount_cents, account, under)
    round_.take_bet(transaction_id, amount_cents, now, settings.round_seconds, taken, bonus_id)
    player_id, round_id = session.player_id, round_.round_id
    unit.add(
        ProviderBet(
            provider_id, transaction_id, player_id, round_id, amount_cents, None,
            taken.bonus_cents,
        )
    )  # fmt: skip
    session.touch(now)
    return WalletCall(wallet, allowed, transaction_id, taken)


def win(
    unit: Unit,
    settings: ProviderSettings,
    now: datetime.datetime,
    call: Call,
    round_ref: str,
    amount_cents: int,
    bet_transaction_id: str | None,
) -> WalletCall:
    """Credit a win; an expired session is accepted (a provider retries a win)."""
    provider_id, transaction_id = call.provider_id, call.transaction_id
    session = load_session(unit, provider_id, call.token)
    round_ = unit.find(ProviderRound, _round_key(session, round_ref))
    if round_ is None:
        raise NoBetInRound(f"the player placed no bet in round {round_ref}")
    if round_.status == OPEN and round_.over(now, settings.round_seconds):
        # Lapsed, and the worker has not passed yet: end it first (its wagering counted),
        # so that the late win does not bring it back to life for bets and rollbacks.
        _end(unit, round_, now, INACTIVE)
    round_.pay_win(transaction_id, amount_cents, bet_transaction_id, now)
    wallet = wallet_at(unit, now, session.player_id, session.mode)
    account, share = games_account(provider_id), round_.win_split(amount_cents)
    wallet.credit(
        round_.round_id, transaction_id, "win", amount_cents, account,
        share.bonus_cents, round_.bonus_id,
    )  # fmt: skip
    session.touch(now)
    return WalletCall(wallet, session.bonus_allowed, transaction_id)


def rollback(
    unit: Unit,
    settings: ProviderSettings,
    now: datetime.datetime,
    call: Call,
    bet_transaction_id: str,
) -> WalletCall:
    """Give back exactly what the bet took; a bet never seen is tombstoned, and one
    rolled back already is left as it is."""
    provider_id, transaction_id = call.provider_id, call.transaction_id
    session = load_session(unit, provider_id, call.token)
    bet_ = unit.find(ProviderBet, bet_uuid(provider_id, bet_transaction_id))
    if bet_ is None:
        tombstone = ProviderBet(
            provider_id, bet_transaction_id, session.player_id, None, 0, transaction_id
        )
        unit.add(tombstone)
    elif bet_.player_id != session.player_id:
        raise InvalidToken(f"bet {bet_transaction_id} is not this session's player's")
    elif bet_.rolled_back_by is None:
        assert bet_.round_id is not None
        round_ = unit.get(ProviderRound, _uuid_of(bet_.round_id), _missing_round)
        given = round_.roll_back(transaction_id, bet_transaction_id, now, settings.round_seconds)
        bet_.roll_back(transaction_id)
        wallet = wallet_at(unit, now, bet_.player_id, round_.mode)
        account, cents = games_account(provider_id), given.cash_cents + given.bonus_cents
        wallet.credit(
            round_.round_id, transaction_id, "rollback", cents, account,
            given.bonus_cents, round_.bonus_id,
        )  # fmt: skip
    session.touch(now)
    wallet = load_wallet(unit, session.player_id, session.mode)
    return WalletCall(wallet, session.bonus_allowed, transaction_id)


def end_round(
    unit: Unit, now: datetime.datetime, provider_id: str, token: str, round_ref: str
) -> ProviderRound:
    """End the player's round; a round never seen is opened ended, so that a late bet
    in it is refused."""
    session = load_session(unit, provider_id, token)
    round_ = _round(unit, session, round_ref, session.game_id, now)
    _end(unit, round_, now, BY_PROVIDER)
    return round_


def lapse(unit: Unit, settings: ProviderSettings, now: datetime.datetime, round_id: str) -> bool:
    """The worker's: end a round that has seen no call for `round_seconds`; says
    whether it did."""
    round_ = unit.find(ProviderRound, _uuid_of(round_id))
    if round_ is None or not round_.over(now, settings.round_seconds):
        return False
    return _end(unit, round_, now, INACTIVE)


def _end(unit: Unit, round_: ProviderRound, now: datetime.datetime, reason: str) -> bool:
    """End a round; at its first end, its stakes under a bonus count towards that
    bonus (rules.md 9), which may convert in the same save."""
    first = round_.status == OPEN
    ended = round_.end(now, reason)
    if first and ended and round_.bonus_id is not None:
        wallet = wallet_at(unit, now, round_.player_id, round_.mode)
        wallet.count_wagering(round_.round_id, round_.bonus_id, round_.wagered_cents)
    return ended


def _round(
    unit: Unit, session: GameSession, round_ref: str, game_id: str, now: datetime.datetime
) -> ProviderRound:
    """The player's round of that provider's id, opened at its first call."""
    found = unit.find(ProviderRound, _round_key(session, round_ref))
    if found is not None:
        return found
    round_ = ProviderRound(
        session.provider_id, session.player_id, round_ref, game_id, session.mode,
        now.isoformat(), session.theoretical_rtp,
    )  # fmt: skip
    unit.add(round_)
    return round_


def _round_key(session: GameSession, round_ref: str) -> UUID:
    return round_uuid(session.provider_id, session.player_id, session.mode, round_ref)


def _sealed(unit: Unit, provider_id: str, secrets: list[str]) -> str:
    clear = json.dumps(check_secrets(secrets)).encode()
    return unit.sealing().seal(clear, secrets_context(provider_id))


def _uuid_of(round_id: str) -> UUID:
    return UUID(round_id)


def _missing_round() -> NoBetInRound:
    return NoBetInRound("the bet's round is not found")
