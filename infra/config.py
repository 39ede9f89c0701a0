"""Configuration: read from the environment (and `.env`), validated once at start-up.

A bad setting stops start-up with a message that names it.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from domain.bonus import WAGERING_CAP_MAX, WAGERING_MAX_DEFAULT
from domain.errors import InvalidAmount
from domain.money import parse_amount
from domain.settings import (
    BlackjackHall,
    BlackjackSettings,
    GameSettings,
    HouseBaccarat,
    P2PBaccarat,
    ProviderSettings,
    TableGame,
    TableSettings,
    TableType,
)
from infra.checkpoints.witnesses import check_witness_setting
from infra.commands.seam import RECEIPT_RETENTION_DAYS, RECEIPT_RETENTION_DAYS_MAX
from infra.feed.target import parse_feed
from infra.nats_target import is_nats
from infra.secrets import (
    DEV_KEY_FILE,
    KEY_BYTES,
    AesGcmBox,
    SecretKeyError,
    development_key,
    parse_key,
)
from infra.store.faults import DEADLINE_SECONDS, DEADLINE_SECONDS_MAX, DEADLINE_SECONDS_MIN
from infra.store.group_commit import GroupCommitSettings
from infra.store.seal import parse_private_key, parse_public_key

ROLES = ("service", "operator", "auditor")
DEV_KEYS = {"dev-service": "service", "dev-operator": "operator", "dev-auditor": "auditor"}
DEFAULT_DATABASE_URL = "sqlite:///var/casino.sqlite"


class ConfigError(Exception):
    """A setting is missing or wrong; the message names it."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CASINO_", env_file=".env", extra="ignore", frozen=True
    )

    database_url: str = DEFAULT_DATABASE_URL
    api_keys: str = ""
    # Seals each round's seed until it is over (infra/secrets.py); required in production.
    secret_key: str = Field(default="", repr=False)
    env: Literal["development", "production"] = "development"
    test_mode: bool = False
    idle_timeout_seconds: int = Field(default=600, ge=1, le=86_400)
    resume_window_seconds: int = Field(default=600, ge=1, le=86_400)
    decision_seconds: int = Field(default=30, ge=1, le=3_600)
    # A provider's round with no call for this long counts as ended (rules.md 10).
    provider_round_seconds: int = Field(default=3_600, ge=60, le=30 * 86_400)
    db_pool_size: int = Field(default=5, ge=1, le=100)
    postgres_schema: str = Field(default="public", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # "inside": `casino serve` runs the projector and reads catch it up first; "separate":
    # `casino projections run` does, and reads wait only for the `min_position` asked;
    # "auto": inside on SQLite, and on PostgreSQL in a process `casino serve` starts
    # beside itself, reads waiting for the log's head (see `projector_runs`).
    projector: Literal["auto", "inside", "separate"] = "auto"
    # A wake-up waits this long for more commits, so a burst is projected in one batch.
    projector_debounce_ms: int = Field(default=25, ge=0, le=1000)
    read_wait_seconds: float = Field(default=5.0, gt=0, le=60)
    # Every request is answered within this (rules.md 8): past it, 503 store_unavailable
    # with Retry-After; the store's connect, lock and statement timeouts derive from it.
    request_deadline_seconds: float = Field(
        default=DEADLINE_SECONDS, ge=DEADLINE_SECONDS_MIN, le=DEADLINE_SECONDS_MAX
    )
    # Group commit (infra/store/group_commit.py): how long the committer lingers for more
    # saves after a shared transaction, and how many saves one transaction takes.
    group_commit_wait_ms: float = Field(default=0.0, ge=0, le=50)
    group_commit_max: int = Field(default=64, ge=1, le=1000)
    # How long an Idempotency-Key's answer is kept (infra/store/receipts.py); after
    # that a replay is 422 idempotency_key_expired and the pruner drops the answer.
    receipt_retention_days: int = Field(
        default=RECEIPT_RETENTION_DAYS, ge=1, le=RECEIPT_RETENTION_DAYS_MAX
    )
    # The highest wagering multiple a bonus may be granted with (rules.md 9).
    bonus_wagering_max: int = Field(default=WAGERING_MAX_DEFAULT, ge=1, le=WAGERING_CAP_MAX)
    house_decks: int = Field(default=8, ge=1, le=8)
    house_tie_pays: int = Field(default=8, ge=1, le=100)
    house_stake_min: str = "1.00"
    house_stake_max: str = "1000.00"
    p2p_decks: int = Field(default=6, ge=1, le=8)
    p2p_tie_pays: int = Field(default=9, ge=1, le=100)
    p2p_commission_basis_points: int = Field(default=175, ge=0, le=5000)
    p2p_table_types: str = ""
    blackjack_decks: int = Field(default=2, ge=2, le=8)
    blackjack_halls: str = ""
    chemin_de_fer_decks: int = Field(default=6, ge=1, le=8)
    chemin_de_fer_bank_min: str = "20.00"
    chemin_de_fer_bank_max: str = "10000.00"
    en_banque_decks: int = Field(default=3, ge=2, le=4)
    en_banque_bank_min: str = "100.00"
    en_banque_bank_max: str = "50000.00"
    table_commission_basis_points: int = Field(default=500, ge=0, le=5000)
    # The seals' private key (infra/store/seal.py): base64 of its 32 raw bytes, or PEM.
    seal_key: str = ""
    # Checkpoints of the latest seal, outside the database (infra/witness.py): a file,
    # or nats://user:password@host:port/STREAM (infra/checkpoints/witnesses.py).
    witness: str = Field(default="var/witness.jsonl", repr=False)
    # The public key the witness's checkpoints are checked with (they are signed with
    # the seal key); empty: the key the seals are checked with.
    witness_public_key: str = ""
    witness_seconds: float = Field(default=10.0, ge=0.1, le=3_600)
    witness_events: int = Field(default=1_000, ge=1, le=1_000_000)
    # The event feed (docs/feed.md): nats://user:password@host:port/STREAM, or empty: off.
    feed: str = Field(default="", repr=False)
    # PostgreSQL: the role that owns and migrates the schema; the service's own role
    # (CASINO_DATABASE_URL) is then granted only insert and read on the log.
    database_owner_url: str = ""
    # The tenant directory (infra/tenants.py): JSON or a file's path; empty, one tenant.
    tenants: str = Field(default="", repr=False)

    @field_validator(
        "house_stake_min",
        "house_stake_max",
        "chemin_de_fer_bank_min",
        "chemin_de_fer_bank_max",
        "en_banque_bank_min",
        "en_banque_bank_max",
    )
    @classmethod
    def _whole_dollars(cls, text: str) -> str:
        _whole_dollar_cents(text)
        return text

    @field_validator("p2p_table_types")
    @classmethod
    def _table_types(cls, text: str) -> str:
        _parse_table_types(text)
        return text

    @field_validator("blackjack_halls")
    @classmethod
    def _halls(cls, text: str) -> str:
        _parse_halls(text)
        return text

    def group_commit(self) -> GroupCommitSettings:
        return GroupCommitSettings(self.group_commit_wait_ms / 1000, self.group_commit_max)

    def games(self) -> GameSettings:
        house = HouseBaccarat(
            decks=self.house_decks,
            tie_pays=self.house_tie_pays,
            stake_min_cents=_whole_dollar_cents(self.house_stake_min),
            stake_max_cents=_whole_dollar_cents(self.house_stake_max),
        )
        p2p = P2PBaccarat(
            decks=self.p2p_decks,
            tie_pays=self.p2p_tie_pays,
            commission_basis_points=self.p2p_commission_basis_points,
            table_types=_parse_table_types(self.p2p_table_types) or P2PBaccarat().table_types,
        )
        blackjack = BlackjackSettings(
            decks=self.blackjack_decks,
            halls=_parse_halls(self.blackjack_halls) or BlackjackSettings().halls,
        )
        # American tables play the house game: its decks, tie payout and limits.
        punto_banco = TableGame(
            "punto_banco", house.decks, house.tie_pays, house.stake_min_cents, house.stake_max_cents
        )
        tables = TableSettings(
            games={
                punto_banco.name: punto_banco,
                "chemin_de_fer": self._banked("chemin_de_fer", self.chemin_de_fer_decks),
                "en_banque": self._banked("en_banque", self.en_banque_decks),
            },
            decision_seconds=self.decision_seconds,
        )
        return GameSettings(
            house=house,
            p2p=p2p,
            blackjack=blackjack,
            tables=tables,
            test_mode=self.test_mode,
            bonus_wagering_max=self.bonus_wagering_max,
            providers=ProviderSettings(round_seconds=self.provider_round_seconds),
        )

    def _banked(self, game: str, decks: int) -> TableGame:
        """A player-banked game: bets from $1 to the bank, within its bank limits."""
        low = _whole_dollar_cents(getattr(self, f"{game}_bank_min"))
        high = _whole_dollar_cents(getattr(self, f"{game}_bank_max"))
        rate = self.table_commission_basis_points
        return TableGame(game, decks, 0, 100, high, low, high, rate)

    @field_validator("database_url")
    @classmethod
    def _known_store(cls, url: str) -> str:
        if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
            return url
        if url.startswith(("postgresql://", "postgres://")):
            return url
        raise ValueError("must be sqlite:///path/to/file.sqlite or postgresql://user@host:port/db")

    @field_validator("secret_key")
    @classmethod
    def _well_formed_secret_key(cls, text: str) -> str:
        if text:
            try:
                parse_key(text)
            except SecretKeyError:
                raise ValueError(f"must be {2 * KEY_BYTES} hexadecimal characters") from None
        return text

    def secret_box(self) -> tuple[AesGcmBox, str | None]:
        """The box that seals round seeds, and a warning when it is the development key.
        Only the server needs it: the audit and projection tools never open a seed."""
        if self.secret_key:
            return AesGcmBox(parse_key(self.secret_key)), None
        if self.env == "production":
            raise ConfigError(
                "CASINO_SECRET_KEY: production refuses to start without a key to seal round "
                "seeds (`casino keys secret` prints a new one)"
            )
        key, made = development_key()
        warning = (
            f"no CASINO_SECRET_KEY: round seeds are sealed with the development key in "
            f"{DEV_KEY_FILE}{' (made now)' if made else ''}. Never run like this with real money."
        )
        return AesGcmBox(key), warning

    @field_validator("seal_key")
    @classmethod
    def _seal_key(cls, text: str) -> str:
        if text.strip():
            parse_private_key(text)
        return text

    @field_validator("witness")
    @classmethod
    def _witness(cls, text: str) -> str:
        check_witness_setting(text)
        return text

    @field_validator("witness_public_key")
    @classmethod
    def _witness_public_key(cls, text: str) -> str:
        if text.strip():
            parse_public_key(text)
        return text

    @field_validator("feed")
    @classmethod
    def _feed(cls, text: str) -> str:
        if text.strip():
            parse_feed(text)
        return text

    @field_validator("database_owner_url")
    @classmethod
    def _owner_url(cls, url: str) -> str:
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be postgresql://owner@host:port/db (PostgreSQL only)")
        return url

    @field_validator("api_keys")
    @classmethod
    def _well_formed_keys(cls, text: str) -> str:
        parse_api_keys(text)
        return text

    def keys(self) -> dict[str, str]:
        """API key -> role. With none configured outside production: the dev keys."""
        configured = parse_api_keys(self.api_keys)
        return configured or dict(DEV_KEYS)

    @property
    def on_postgres(self) -> bool:
        return not self.database_url.startswith("sqlite:///")

    @property
    def projector_runs(self) -> Literal["inside", "beside", "separate"]:
        """Where the read models are kept: in a thread of the server ("inside"), in a
        process the server starts beside itself ("beside"; reads wait until it has the
        log's head, so each includes every command answered before it), or in `casino
        projections run`, the operator's ("separate")."""
        if self.projector == "auto":
            return "beside" if self.on_postgres else "inside"
        return self.projector

    @property
    def uses_dev_keys(self) -> bool:
        return not parse_api_keys(self.api_keys)


def _whole_dollar_cents(text: str) -> int:
    try:
        cents = parse_amount(text)
    except InvalidAmount as error:
        raise ValueError(str(error)) from None
    if cents % 100:
        raise ValueError(f"{text} is not whole dollars")
    return cents


def _parse_table_types(text: str) -> dict[str, TableType]:
    """JSON such as {"I": {"min": "2.00", "max": "100.00", "points": 20}, ...}; empty: defaults."""
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
        return {
            name: TableType(
                name,
                _whole_dollar_cents(spec["min"]),
                _whole_dollar_cents(spec["max"]),
                int(spec["points"]),
            )
            for name, spec in raw.items()
        }
    except (ValueError, InvalidAmount, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a table-type map like {TABLE_TYPES_EXAMPLE}: {error}") from None


TABLE_TYPES_EXAMPLE = '{"I": {"min": "2.00", "max": "100.00", "points": 20}}'


def _parse_halls(text: str) -> dict[str, BlackjackHall]:
    """JSON such as {"1": {"min": "0.10", "max": "10.00"}, ...}; empty: the defaults."""
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
        halls = {
            name: BlackjackHall(name, parse_amount(spec["min"]), parse_amount(spec["max"]))
            for name, spec in raw.items()
        }
    except (ValueError, InvalidAmount, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a hall map like {HALLS_EXAMPLE}: {error}") from None
    for hall in halls.values():
        if hall.stake_min_cents > hall.stake_max_cents:
            raise ValueError(f"hall {hall.name}: min is above max")
    return halls


HALLS_EXAMPLE = '{"1": {"min": "0.10", "max": "10.00"}}'


def parse_api_keys(text: str) -> dict[str, str]:
    keys: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in text.split(","))):
        role, separator, key = pair.partition("=")
        if not separator or role.strip() not in ROLES or not key.strip():
            raise ValueError(f"'{pair}' is not role=key with a role among {', '.join(ROLES)}")
        keys[key.strip()] = role.strip()
    return keys


def load_settings(**overrides: object) -> Settings:
    """Read and check every setting, or raise ConfigError naming the bad ones."""
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        problems = "; ".join(
            f"CASINO_{'_'.join(str(part) for part in issue['loc']).upper()}: {issue['msg']}"
            for issue in error.errors()
        )
        raise ConfigError(problems) from None
    if settings.env == "production":
        _check_production(settings)
    return settings


def _check_production(settings: Settings) -> None:
    if settings.uses_dev_keys:
        raise ConfigError("CASINO_API_KEYS: production refuses the dev keys; configure real keys")
    if any(key in DEV_KEYS for key in settings.keys()):  # noqa: SIM118 - Settings.keys(), not a dict
        raise ConfigError("CASINO_API_KEYS: production refuses the dev-* keys")
    if settings.test_mode:
        raise ConfigError("CASINO_TEST_MODE: certification mode is refused in production")
    if not is_nats(settings.witness):
        raise ConfigError(
            "CASINO_WITNESS: production refuses a witness file, which the casino's own staff "
            "can rewrite; name a NATS JetStream stream (nats://user:password@host:port/STREAM)"
        )
