"""A registered game provider and a player's game session with it (rules.md 10).

A provider's secrets are stored sealed with the application's `SecretBox` (as a
round's seed is, rules.md 5): the log never holds them in clear and no answer
shows them. A session is found by its token, which the log never holds either: the
session's id is derived from it.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal, InvalidOperation
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.errors import InvalidProvider, InvalidToken, TokenExpired, UnknownProvider
from domain.ids import named_uuid
from domain.unit import Unit

PROVIDER_ID_PATTERN = re.compile(r"^[a-z0-9_-]{1,32}$")
# Transaction, round and game ids: 1-128 printable ASCII characters (rules.md 10).
EXTERNAL_ID_PATTERN = re.compile(r"^[!-~]{1,128}$")
NAME_LENGTH_MAX = 100
SECRET_LENGTH_MIN, SECRET_LENGTH_MAX = 32, 128
SECRETS_MAX = 2  # the current one and the next, during a rotation
RTP_MIN, RTP_MAX = Decimal("0.5"), Decimal("1.5")  # a declared return to player, as a fraction
# A session's last call is noted at most once a minute: its expiry by inactivity is
# that coarse, and a busy session's calls do not each save it.
TOUCH_SECONDS = 60
GAMES_ACCOUNT_PREFIX = "casino:games:"


def provider_uuid(provider_id: str) -> UUID:
    return named_uuid(f"provider/{provider_id}")


def session_uuid(token: str) -> UUID:
    return named_uuid(f"game-session/{token}")


def games_account(provider_id: str) -> str:
    """The house's side of a provider's games in the ledger."""
    return GAMES_ACCOUNT_PREFIX + provider_id


def secrets_context(provider_id: str) -> str:
    """What a provider's sealed secrets are bound to: they open for no other."""
    return f"provider-secrets/{provider_id}"


def check_provider_id(provider_id: str) -> str:
    if not PROVIDER_ID_PATTERN.fullmatch(provider_id):
        raise InvalidProvider(
            f"provider id {provider_id[:40]!r} must be 1-32 lower-case letters, digits, '_' or '-'"
        )
    return provider_id


def check_secrets(secrets: list[str]) -> list[str]:
    if not 1 <= len(secrets) <= SECRETS_MAX:
        raise InvalidProvider(f"give 1 or {SECRETS_MAX} secrets")
    for secret in secrets:
        if not SECRET_LENGTH_MIN <= len(secret) <= SECRET_LENGTH_MAX or not secret.isprintable():
            raise InvalidProvider(
                f"a secret is {SECRET_LENGTH_MIN}-{SECRET_LENGTH_MAX} printable characters"
            )
    return secrets


def check_rtp(rtp: str | None) -> str | None:
    """A declared theoretical return to player: a fraction such as "0.965", or None."""
    if rtp is None:
        return None
    try:
        value = Decimal(rtp)
    except InvalidOperation:
        value = Decimal(0)
    if not RTP_MIN <= value <= RTP_MAX or len(rtp) > 10:
        raise InvalidProvider(f"theoretical_rtp is a fraction from {RTP_MIN} to {RTP_MAX}")
    return rtp


class Provider(FastCopy, Aggregate):
    TOPIC = "casino:Provider"

    class Created(Aggregate.Created):
        TOPIC = "casino:Provider.Registered"
        provider_id: str
        name: str
        bonus_allowed: bool
        sealed_secrets: str
        theoretical_rtp: str | None

    @staticmethod
    def create_id(
        provider_id: str,
        name: str,
        bonus_allowed: bool,
        sealed_secrets: str,
        theoretical_rtp: str | None,
    ) -> UUID:
        return provider_uuid(provider_id)

    @event(Created)
    def __init__(
        self,
        provider_id: str,
        name: str,
        bonus_allowed: bool,
        sealed_secrets: str,
        theoretical_rtp: str | None,
    ) -> None:
        self.provider_id = provider_id
        self.name = name
        self.bonus_allowed = bonus_allowed
        self.sealed_secrets = sealed_secrets
        self.theoretical_rtp = theoretical_rtp

    def rotate(self, sealed_secrets: str) -> None:
        self._secrets_rotated(sealed_secrets)

    @event("SecretsRotated", topic="casino:Provider.SecretsRotated")
    def _secrets_rotated(self, sealed_secrets: str) -> None:
        self.sealed_secrets = sealed_secrets


def load_provider(unit: Unit, provider_id: str) -> Provider:
    check_provider_id(provider_id)
    return unit.get(
        Provider,
        provider_uuid(provider_id),
        lambda: UnknownProvider(f"no provider {provider_id} is registered"),
    )


class GameSession(FastCopy, Aggregate):
    TOPIC = "casino:GameSession"
    # Its only later event lengthens its life: a command that found it live decided
    # right even on an older copy (infra/commands/seam.py reads it so).
    WIDENS_ONLY = True

    class Created(Aggregate.Created):
        TOPIC = "casino:GameSession.Opened"
        provider_id: str
        player_id: str
        game_id: str
        mode: str
        at: str
        lifetime_seconds: int
        theoretical_rtp: str | None  # the provider's declared figure when it opened
        bonus_allowed: bool  # the provider's, which never changes after registration

    @classmethod
    def open(
        cls,
        token: str,
        provider_id: str,
        player_id: str,
        game_id: str,
        mode: str,
        at: str,
        lifetime_seconds: int,
        theoretical_rtp: str | None,
        bonus_allowed: bool,
    ) -> GameSession:
        """A new session, named by its token, which is not stored (only the id made
        from it is)."""
        return cls._create(
            cls.Created,
            id=session_uuid(token),
            provider_id=provider_id,
            player_id=player_id,
            game_id=game_id,
            mode=mode,
            at=at,
            lifetime_seconds=lifetime_seconds,
            theoretical_rtp=theoretical_rtp,
            bonus_allowed=bonus_allowed,
        )

    @event(Created)
    def __init__(
        self,
        provider_id: str,
        player_id: str,
        game_id: str,
        mode: str,
        at: str,
        lifetime_seconds: int,
        theoretical_rtp: str | None,
        bonus_allowed: bool = False,
    ) -> None:
        self.provider_id = provider_id
        self.player_id = player_id
        self.game_id = game_id
        self.mode = mode
        self.last_call_at = at
        self.lifetime_seconds = lifetime_seconds
        self.theoretical_rtp = theoretical_rtp
        # Kept with the session, so that a call need not read the provider as well.
        self.bonus_allowed = bonus_allowed

    @property
    def expires_at(self) -> datetime.datetime:
        last = datetime.datetime.fromisoformat(self.last_call_at)
        return last + datetime.timedelta(seconds=self.lifetime_seconds)

    def check_live(self, now: datetime.datetime) -> None:
        if now >= self.expires_at:
            raise TokenExpired(
                f"the game session expired at {self.expires_at.isoformat()}: open a new one"
            )

    def touch(self, now: datetime.datetime) -> None:
        """Note a call, at most once a minute: the session lives on from it. An expired
        session stays expired (a late win does not revive it)."""
        last = datetime.datetime.fromisoformat(self.last_call_at)
        if now < self.expires_at and (now - last).total_seconds() >= TOUCH_SECONDS:
            self._called(now.isoformat())

    @event("Called", topic="casino:GameSession.Called")
    def _called(self, at: str) -> None:
        self.last_call_at = at


def load_session(unit: Unit, provider_id: str, token: str) -> GameSession:
    """The provider's session of that token (401 invalid_token for any other)."""
    refusal = InvalidToken("no game session of this provider has that token")
    if not 1 <= len(token) <= 128:
        raise refusal
    session = unit.find(GameSession, session_uuid(token))
    if session is None or session.provider_id != provider_id:
        raise refusal
    return session


def session_view_data(session: GameSession) -> dict[str, Any]:
    return {
        "player_id": session.player_id,
        "provider_id": session.provider_id,
        "game_id": session.game_id,
        "mode": session.mode,
        "expires_at": session.expires_at.isoformat(),
    }
