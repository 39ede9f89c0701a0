"""How a round is described in the OpenAPI document: one schema per game, told
apart by `game` (`infra/http/views/rounds.py` and `views/blackjack.py` shape them).

The seed, a certification shoe and the blackjack hole card are never in a round
that is not over (rules.md 5): `seed` reads null until then, and the dealer's
`cards` hold only the up card while the round is in play.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

Money = Annotated[str, Field(pattern=r"^-?[0-9]+\.[0-9]{2}$", examples=["10.00"])]
Mode = Literal["real", "play"]
Cards = Annotated[list[str], Field(examples=[["KH", "3S"]])]


class Part(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class Limits(Part):
    min: Money
    max: Money


class SpotBet(Part):
    spot: str = Field(examples=["banker"])
    amount: Money


class BaccaratHand(Part):
    cards: Cards
    total: int | None


class SpotPayout(Part):
    spot: str
    stake: Money
    net: Money


class NetSplit(Part):
    """A player's result in one round, in cash and in bonus money (rules.md 9)."""

    net_cash: Money
    net_bonus: Money


class BaccaratRound(Part):
    """A baccarat coup: house (`variant: house`) or at a P2P table (`p2p`)."""

    round_id: str
    game: Literal["baccarat"]
    variant: str = Field(examples=["house", "p2p"])
    status: str = Field(examples=["open", "settled", "voided"])
    mode: Mode
    player_id: str | None
    dealer_id: str | None
    table_id: str | None
    seed_commitment: str = Field(description="SHA-256 of the seed, published before any bet")
    seed: str | None = Field(description="null until the round is settled or voided")
    shuffle_algorithm: str = Field(examples=["fy-sha256-v1"])
    decks: int
    tie_pays: int
    limits: Limits
    bets: list[SpotBet]
    total_stake: Money
    hands: dict[str, BaccaratHand] = Field(description="`player` and `banker`")
    outcome: str | None = Field(examples=["player", "banker", "tie"])
    payouts: list[SpotPayout]
    commission: Money | None = Field(description="P2P rounds only")
    net: dict[str, Money] | None = Field(description="per participant once settled")
    void_reason: str | None
    net_split: dict[str, NetSplit] | None = Field(
        default=None,
        description="only in a settled round where bonus money was staked (rules.md 9): "
        "each such player's result in cash and in bonus",
    )
    next_round: BaccaratRound | None = Field(
        default=None,
        description="in the answer to a P2P deal only: the round auto-confirm opened in "
        "the same save, or null",
    )


class BoxLimits(Limits):
    per: Literal["box"]


class BoxBet(Part):
    box: int
    amount: Money


class BlackjackHand(Part):
    hand: int
    cards: Cards
    total: int
    soft: bool
    blackjack: bool
    stake: Money
    doubled: bool
    split: bool
    finished: bool
    result: str | None
    net: Money | None


class Box(Part):
    box: int
    bet: Money
    insurance: Money | None
    even_money: bool
    hands: list[BlackjackHand]
    insurance_net: Money | None
    net: Money | None


class DealerHand(Part):
    cards: Cards = Field(description="only the up card while the round is in play")
    total: int | None
    soft: bool | None
    hole_card_hidden: bool


class Turn(Part):
    box: int
    hand: int


class LegalActions(Turn):
    actions: list[str] = Field(examples=[["hit", "stand", "double"]])


class BlackjackOutcome(Part):
    dealer_total: int
    dealer_blackjack: bool
    dealer_bust: bool


class HandPayout(Part):
    hand: int
    result: str
    stake: Money
    net: Money


class BoxPayout(Part):
    box: int
    hands: list[HandPayout]
    insurance: Money | None
    net: Money


class BlackjackNet(Part):
    player: Money
    casino: Money


class BlackjackRound(Part):
    """A Baden-Baden blackjack round (rules.md 3) in a hall."""

    round_id: str
    game: Literal["blackjack"]
    variant: str = Field(description="the hall", examples=["1", "2", "vip"])
    status: str = Field(examples=["open", "in_play", "interrupted", "settled", "voided"])
    mode: Mode
    player_id: str
    hall: str
    limits: BoxLimits
    decks: int
    seed_commitment: str
    seed: str | None = Field(description="null until the round is settled or voided")
    shuffle_algorithm: str
    bets: list[BoxBet]
    total_stake: Money
    held: Money = Field(description="bets plus doubles, splits and insurance")
    phase: str | None
    boxes: list[Box]
    dealer: DealerHand
    next: Turn | None = Field(description="where play goes on")
    legal_actions: LegalActions | None
    outcome: BlackjackOutcome | None
    payouts: list[BoxPayout]
    net: BlackjackNet | None
    net_split: dict[str, NetSplit] | None = Field(
        default=None,
        description="only in a settled round where bonus money was staked (rules.md 9): "
        "each such player's result in cash and in bonus",
    )


class PlayerBet(Part):
    player_id: str
    spot: str = Field(examples=["punto", "banker", "right", "left", "both"])
    amount: Money


class ReturnedBet(Part):
    player_id: str
    spot: str
    amount: Money = Field(description="what went back to the punter")
    covered: Money = Field(description="what of the bet the bank covered, and stands")


class PerPlayerLimits(Limits):
    per: Literal["player"]


class OwedChoice(Part):
    player_id: str
    hand: str
    actions: list[str] = Field(examples=[["draw", "stand"]])
    deadline: str = Field(description="ISO 8601, UTC: then the rules choose (`by: system`)")


class PlayerPayout(Part):
    player_id: str
    spot: str
    stake: Money
    net: Money


class TableCoup(Part):
    """A coup at a multi-player table (`variant`: `punto_banco`, `chemin_de_fer`,
    `en_banque`); `game` is `baccarat`."""

    round_id: str
    game: Literal["baccarat"]
    variant: str = Field(examples=["punto_banco", "chemin_de_fer", "en_banque"])
    status: str = Field(examples=["open", "in_play", "settled", "voided"])
    mode: Mode
    table_id: str
    seed_commitment: str
    seed: str | None = Field(description="null until the coup is settled or voided")
    shuffle_algorithm: str
    decks: int
    tie_pays: int | None = Field(description="to 1 at punto banco; null where a tie is returned")
    limits: PerPlayerLimits
    bets: list[PlayerBet] = Field(description="the bets that stand (once dealt, as covered)")
    total_stake: Money
    returned: list[ReturnedBet] = Field(
        description="chemin de fer: each bet, or the part of it, that the bank did not "
        "cover at the deal, covering seat by seat in play order from the banker's next "
        "seat; given back to its punter"
    )
    hands: dict[str, BaccaratHand]
    playing: dict[str, str] = Field(description="who plays each punters' hand")
    next: OwedChoice | None = Field(description="the choice owed, while one is")
    decisions: list[dict[str, Any]] = Field(description="`{hand, action, by}`")
    outcome: Any = Field(description="once settled: per hand or the coup's winner")
    payouts: list[PlayerPayout]
    banker_id: str | None
    banco: dict[str, Any] | None
    bank_before: Money | None
    bank_after: Money | None
    commission: Money | None
    net: dict[str, Money] | None
    casino_net: Money | None
    void_reason: str | None
    net_split: dict[str, NetSplit] | None = Field(
        default=None,
        description="only in a settled round where bonus money was staked (rules.md 9): "
        "each such player's result in cash and in bonus",
    )


class ExternalCall(Part):
    transaction_id: str
    amount: Money


class ExternalRound(Part):
    """A third-party provider's round for one player (rules.md 10): its calls so far."""

    round_id: str
    game: Literal["external"]
    variant: str = Field(description="the provider's id", examples=["acme"])
    provider_round_id: str = Field(description="the provider's own id of the round")
    game_id: str
    status: Literal["open", "closed"]
    ended_by: Literal["provider", "inactive"] | None
    mode: Mode
    player_id: str
    bets: list[ExternalCall] = Field(description="the bets that stand")
    rolled_back: list[ExternalCall] = Field(description="bets rolled back, each given back")
    wins: list[str] = Field(description="the wins' transaction ids")
    staked: Money
    won: Money
    net: Money = Field(description="the player's: won less staked")
    last_call_at: str


class Round(RootModel[BaccaratRound | BlackjackRound | TableCoup | ExternalRound]):
    """A round of any game: `game` says which, and for baccarat `variant` says whether
    it is a house or P2P round or a coup at a multi-player table; `external`, a
    provider's round."""
