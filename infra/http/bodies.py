"""Request bodies: what each command route accepts, checked at the edge.

Money arrives as decimal strings and leaves here as integer cents (`cents_of`);
every model refuses unknown fields, and takes types strictly: no string or
boolean for a number, no string for a boolean. Every string has a length limit.

What can be checked without the state is checked here, by the domain's own rules,
before the command consults the state: a bad `months` is 422 even for a player
already excluded, a box of 9 even on a round that is over (api.md, Conventions).
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from domain.baccarat.rules import check_chips
from domain.blackjack.hands import validate_box_number
from domain.bonus import EXPIRY_DAYS_MAX, EXPIRY_DAYS_MIN, Grant
from domain.errors import InvalidLimit, InvalidLimits, UnknownPeriod
from domain.ids import PLAYER_ID_PATTERN
from domain.money import parse_amount, parse_limit
from domain.player import DISPLAY_NAME_LENGTH_MAX
from domain.protection import check_exclusion, check_limit_cents
from domain.rounds import SHOE_PREFIX_CARDS_MAX
from domain.wallet import REASON_LENGTH_MAX, check_points_change

Mode = Literal["real", "play"]
WAGERING_BODY_MAX = 1_000_000  # a bound on the number; the cap itself is a setting
PlayerId = Annotated[
    str,
    Field(
        pattern=PLAYER_ID_PATTERN.pattern,
        description="1-64 letters, digits, '_' or '-'",
        examples=["alice"],
    ),
]
CARD_LENGTH_MAX = 3  # "10H"
ShoeField = Field(
    default=None,
    description="certification mode only: the first cards of the shoe, in dealing order "
    '(ranks, optionally with a suit letter: "QH")',
    examples=[["10", "K", "3", "10", "10", "Q"]],
    max_length=SHOE_PREFIX_CARDS_MAX,
)
Card = Annotated[str, Field(max_length=CARD_LENGTH_MAX, examples=["10", "QH"])]
# Categories no name shows: controls, format characters (bidi overrides, zero-width
# joiners), surrogates, private use, unassigned; and line or paragraph separators.
UNSHOWN_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def _shown(name: str) -> str:
    """A display name a person can read: no control or bidi character, not blank."""
    if not name.strip():
        raise ValueError("display_name must not be blank")
    for character in name:
        if unicodedata.category(character) in UNSHOWN_CATEGORIES:
            raise ValueError(
                f"display_name must not hold control or format characters (U+{ord(character):04X})"
            )
    return name


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def cents_of(amount: str) -> int:
    """An amount's decimal string as cents; refused (422 invalid_amount) unless exact."""
    return parse_amount(amount)


# Players and wallets.


class NewPlayer(Body):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"player_id": "alice", "display_name": "Alice"}]}
    )

    player_id: PlayerId
    display_name: Annotated[
        str,
        Field(min_length=1, max_length=DISPLAY_NAME_LENGTH_MAX, examples=["Alice"]),
        AfterValidator(_shown),
    ]


class MoneyMovement(Body):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"mode": "real", "amount": "250.00"}]}
    )

    mode: Mode
    amount: str = Field(
        max_length=40, description="decimal string, at most two places", examples=["10.00"]
    )


class NewBonus(Body):
    """An operator's grant (rules.md 9); the wagering multiple's cap is the domain's
    (CASINO_BONUS_WAGERING_MAX: 422 wagering_above_cap)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"amount": "100.00", "wagering": 10, "expires_in_days": 30}]
        }
    )

    amount: str = Field(max_length=40, description="decimal string", examples=["100.00"])
    wagering: int = Field(ge=1, le=WAGERING_BODY_MAX, description="a whole multiple of amount")
    expires_in_days: int = Field(ge=EXPIRY_DAYS_MIN, le=EXPIRY_DAYS_MAX)
    max_bet: str | None = Field(default=None, max_length=40, examples=["5.00"])
    max_conversion: str | None = Field(default=None, max_length=40, examples=["250.00"])

    def grant(self, wagering_cap: int) -> Grant:
        """The grant, checked by the domain's rules before any state is read."""
        grant = Grant(
            parse_amount(self.amount),
            self.wagering,
            self.expires_in_days,
            None if self.max_bet is None else parse_amount(self.max_bet),
            None if self.max_conversion is None else parse_amount(self.max_conversion),
        )
        grant.check(wagering_cap)
        return grant


class PointsAdjustment(Body):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"mode": "real", "change": 50, "reason": "welcome"}]}
    )

    mode: Mode
    change: int = Field(description="whole points, may be negative", examples=[50])
    reason: str = Field(min_length=1, max_length=REASON_LENGTH_MAX)

    def check(self) -> None:
        """Refuse (422 invalid_points_change) an adjustment no wallet may take."""
        check_points_change(self.change, self.reason)


# Rounds.


class NewBaccaratRound(Body):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"player_id": "alice", "mode": "real"}]}
    )

    player_id: PlayerId
    mode: Mode
    shoe: list[Card] | None = ShoeField


class NewBet(Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"spot": "banker", "amount": "10.00"}, {"box": 1, "amount": "5.00"}]
        }
    )

    spot: str | None = Field(
        default=None, max_length=40, description="baccarat: player, banker or tie"
    )
    box: int | None = Field(default=None, description="blackjack: box 1-5")
    amount: str = Field(max_length=40, examples=["10.00"])
    player_id: str | None = Field(
        default=None,
        pattern=PLAYER_ID_PATTERN.pattern,
        description="at a multi-player table: whose bet it is (required there)",
    )

    @model_validator(mode="after")
    def _one_target(self) -> NewBet:
        if (self.spot is None) == (self.box is None):
            raise ValueError("give either spot (baccarat) or box (blackjack)")
        return self

    @property
    def target(self) -> str:
        """The spot, or the box (refused, 422 invalid_box, unless one of 1-5)."""
        return self.spot if self.spot is not None else str(validate_box_number(self.box))


class NewBlackjackRound(Body):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"player_id": "alice", "mode": "real", "hall": "2"}]}
    )

    player_id: PlayerId
    mode: Mode
    hall: str = Field(max_length=40, description="a configured hall: 1, 2 or vip", examples=["1"])
    shoe: list[Card] | None = ShoeField


class NewAction(Body):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"box": 1, "hand": 0, "action": "stand"}]}
    )

    box: int | None = Field(default=None, ge=1, le=5, description="blackjack: the box in play")
    hand: int = Field(default=0, ge=0, le=1, description="0, or 1 for the second split hand")
    action: Literal[
        "hit", "stand", "double", "split", "insurance", "no_insurance", "even_money", "draw"
    ]
    player_id: str | None = Field(
        default=None,
        pattern=PLAYER_ID_PATTERN.pattern,
        description="at a multi-player table: who makes the choice owed (draw or stand)",
    )


# P2P baccarat.


class NewDealer(Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"player_id": "alice", "mode": "real", "table_type": "I", "auto_confirm": True}
            ]
        }
    )

    player_id: PlayerId
    mode: Mode
    table_type: str = Field(max_length=40, examples=["II"], description="I, II or III")
    auto_confirm: bool = False


class NewTablePlayer(Body):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"player_id": "bob", "mode": "real", "table_type": "I"}]}
    )

    player_id: PlayerId
    mode: Mode
    table_type: str = Field(max_length=40, examples=["II"], description="I, II or III")


class Confirmation(Body):
    shoe: list[Card] | None = ShoeField


class Leaving(Body):
    model_config = ConfigDict(json_schema_extra={"examples": [{"player_id": "bob"}]})

    player_id: PlayerId


# Multi-player tables.


class NewTable(Body):
    game: Literal["punto_banco", "chemin_de_fer", "en_banque"]
    mode: Mode
    bet_min: str | None = Field(default=None, max_length=40, examples=["5.00"])
    bet_max: str | None = Field(default=None, max_length=40, examples=["500.00"])
    bank_min: str | None = Field(default=None, max_length=40, examples=["20.00"])
    bank_max: str | None = Field(default=None, max_length=40, examples=["10000.00"])

    def bet_limits(self) -> tuple[int, int] | None:
        return _limits("bet", self.bet_min, self.bet_max)

    def bank_limits(self) -> tuple[int, int] | None:
        return _limits("bank", self.bank_min, self.bank_max)


def _limits(kind: str, low: str | None, high: str | None) -> tuple[int, int] | None:
    if low is None and high is None:
        return None
    if low is None or high is None:
        raise InvalidLimits(f"give both {kind}_min and {kind}_max, or neither")
    return cents_of(low), cents_of(high)


class PuttingUpTheBank(Body):
    player_id: PlayerId
    amount: str = Field(
        max_length=40,
        description="whole dollars, within the table's bank limits",
        examples=["100.00"],
    )

    @property
    def cents(self) -> int:
        """The amount, refused unless whole dollars (422 invalid_amount, invalid_stake)."""
        cents = cents_of(self.amount)
        check_chips(cents)  # as every stake at baccarat
        return cents


class Banco(Body):
    player_id: PlayerId


class Seating(Body):
    player_id: PlayerId
    seat: str = Field(max_length=8, examples=["7"])


class NewCoup(Body):
    shoe: list[Card] | None = ShoeField


# Player protection (rules.md 7).

LimitAmount = Field(
    default=None,
    max_length=40,
    description='a decimal string ("0.00" allows nothing), or null for no limit',
    examples=["100.00"],
)


class LimitsByPeriod(Body):
    """The limits of one kind per rolling window; a window not named is left as it is."""

    day: str | None = LimitAmount
    week: str | None = LimitAmount
    month: str | None = LimitAmount


class NewLimits(Body):
    """Each kind's windows: an amount, or null for none; a window not named stays."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"mode": "real", "deposit": {"day": "100.00"}, "loss": {"week": None}}]
        }
    )

    mode: Literal["real"] = Field(default="real", description="limits are for real money only")
    deposit: LimitsByPeriod | None = None
    loss: LimitsByPeriod | None = None

    def changes(self) -> dict[str, int | None]:
        """ "deposit:day" -> cents (None: no limit), for each window the body names."""
        changes: dict[str, int | None] = {}
        for kind in sorted(self.model_fields_set - {"mode"}):
            periods = getattr(self, kind)
            for period in [] if periods is None else sorted(periods.model_fields_set):
                text = getattr(periods, period)
                cents = None if text is None else parse_limit(text)
                check_limit_cents(cents)
                changes[f"{kind}:{period}"] = cents
        if not changes:
            raise InvalidLimit('name at least one limit, such as {"deposit": {"day": "100.00"}}')
        return changes


class NewExclusion(Body):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"kind": "time_out", "days": 3}, {"kind": "self_exclusion", "months": 6}]
        }
    )

    kind: Literal["time_out", "self_exclusion"]
    days: int | None = Field(default=None, description="a time-out: 1-42", examples=[3])
    months: int | None = Field(
        default=None, description="a self-exclusion: 6, 12, 24 or 60", examples=[6]
    )

    @property
    def length(self) -> int:
        """Days of a time-out, months of a self-exclusion; the other must be absent."""
        length, other = (
            (self.days, self.months)
            if self.kind == "time_out"
            else (
                self.months,
                self.days,
            )
        )
        if length is None or other is not None:
            unit = "days" if self.kind == "time_out" else "months"
            raise UnknownPeriod(f"a {self.kind} names its length in {unit}, and nothing else")
        check_exclusion(self.kind, length)
        return length
