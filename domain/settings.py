"""Game settings as plain values: limits, decks, payouts, commission rates, table types.

Every number here is a default of rules.md that configuration may change; the
infra layer builds a `GameSettings` from the environment and hands it to the
application. The rules that use them live with their games (`domain/baccarat/`,
`domain/blackjack/`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.errors import UnknownHall, UnknownTableGame, UnknownTableType


@dataclass(frozen=True)
class HouseBaccarat:
    decks: int = 8
    tie_pays: int = 8
    stake_min_cents: int = 100
    stake_max_cents: int = 100_000


@dataclass(frozen=True)
class TableType:
    name: str
    stake_min_cents: int
    stake_max_cents: int
    points_min: int


def _default_table_types() -> dict[str, TableType]:
    return {
        "I": TableType("I", 200, 10_000, 20),
        "II": TableType("II", 500, 20_000, 50),
        "III": TableType("III", 2_500, 35_000, 100),
    }


@dataclass(frozen=True)
class P2PBaccarat:
    decks: int = 6
    tie_pays: int = 9
    commission_basis_points: int = 175  # 1.75% of the round's total stake
    table_types: dict[str, TableType] = field(default_factory=_default_table_types)

    def table_type(self, name: str) -> TableType:
        if name not in self.table_types:
            raise UnknownTableType(
                f"table type {name[:40]!r} is not one of {', '.join(self.table_types)}"
            )
        return self.table_types[name]


@dataclass(frozen=True)
class BlackjackHall:
    """A blackjack hall and its limits on the stake of one box (rules.md 3)."""

    name: str
    stake_min_cents: int
    stake_max_cents: int


def _default_halls() -> dict[str, BlackjackHall]:
    return {
        "1": BlackjackHall("1", 10, 1_000),
        "2": BlackjackHall("2", 100, 10_000),
        "vip": BlackjackHall("vip", 2_500, 100_000),
    }


@dataclass(frozen=True)
class BlackjackSettings:
    decks: int = 2
    halls: dict[str, BlackjackHall] = field(default_factory=_default_halls)

    def hall(self, name: str) -> BlackjackHall:
        if name not in self.halls:
            raise UnknownHall(
                f"{name[:40]!r} is not a blackjack hall: choose one of {', '.join(self.halls)}"
            )
        return self.halls[name]


@dataclass(frozen=True)
class TableGame:
    """A multi-player table game's defaults (rules.md 2.2-2.4); a table may narrow its
    limits when it is opened."""

    name: str  # punto_banco, chemin_de_fer or en_banque
    decks: int
    tie_pays: int  # to 1; punto banco only (a tie pushes against a player bank)
    bet_min_cents: int  # on each player's total stake in a coup
    bet_max_cents: int
    bank_min_cents: int = 0  # player-banked games only
    bank_max_cents: int = 0
    commission_basis_points: int = 0  # on the banker's winnings, player-banked games


def _default_table_games() -> dict[str, TableGame]:
    return {
        "punto_banco": TableGame("punto_banco", 8, 8, 100, 100_000),
        # A bet is at least $1 and never more than the bank (rules.md 2.3, 2.4).
        "chemin_de_fer": TableGame("chemin_de_fer", 6, 0, 100, 1_000_000, 2_000, 1_000_000, 500),
        "en_banque": TableGame("en_banque", 3, 0, 100, 5_000_000, 10_000, 5_000_000, 500),
    }


@dataclass(frozen=True)
class TableSettings:
    games: dict[str, TableGame] = field(default_factory=_default_table_games)
    decision_seconds: int = 30  # a choice owed at a table, before the system makes it

    def game(self, name: str) -> TableGame:
        if name not in self.games:
            raise UnknownTableGame(
                f"{name[:40]!r} is not a table game: choose one of {', '.join(self.games)}"
            )
        return self.games[name]


@dataclass(frozen=True)
class ProviderSettings:
    """Third-party games (rules.md 10): how long a game session lives without a call,
    and how long a provider's round may go without one before it counts as ended."""

    session_seconds: int = 86_400
    round_seconds: int = 3_600  # CASINO_PROVIDER_ROUND_SECONDS


@dataclass(frozen=True)
class GameSettings:
    house: HouseBaccarat = field(default_factory=HouseBaccarat)
    p2p: P2PBaccarat = field(default_factory=P2PBaccarat)
    blackjack: BlackjackSettings = field(default_factory=BlackjackSettings)
    tables: TableSettings = field(default_factory=TableSettings)
    providers: ProviderSettings = field(default_factory=ProviderSettings)
    test_mode: bool = False  # certification mode: a round's first cards may be chosen
    bonus_wagering_max: int = 10  # the highest wagering multiple of a bonus (rules.md 9)
