"""Game settings as plain values: limits, decks, payouts, commission, table types.

Every number here is a default of RULES.md that configuration may change; the
infra layer builds a `GameSettings` from the environment and hands it to the
application.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from domain.cards import InvalidCard
from domain.errors import InvalidShoe, TestModeDisabled, UnknownHall
from domain.money import fraction_half_up
from domain.shoe import CardNotInShoe, committed_shoe

CENTS_PER_DOLLAR = 100
CHIPS_DOLLARS = (100, 25, 5, 1)  # Largest first: a stake is shown as the fewest chips.
BASIS_POINTS = 10_000
SHOE_PREFIX_CARDS_MAX = 416


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

    def commission_cents(self, total_stake_cents: int) -> int:
        """The casino's commission on a round, rounded half up to the cent (RULES.md 2.1)."""
        return fraction_half_up(total_stake_cents, self.commission_basis_points, BASIS_POINTS)

    def worst_case_cents(self, table: TableType) -> int:
        """What one round can cost the dealer at most: every stake on a winning tie."""
        return self.tie_pays * table.stake_max_cents + self.commission_cents(table.stake_max_cents)


@dataclass(frozen=True)
class BlackjackHall:
    """A blackjack hall and its limits on the stake of one box (RULES.md 3)."""

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
class GameSettings:
    house: HouseBaccarat = field(default_factory=HouseBaccarat)
    p2p: P2PBaccarat = field(default_factory=P2PBaccarat)
    blackjack: BlackjackSettings = field(default_factory=BlackjackSettings)
    test_mode: bool = False


def chips_for(stake_cents: int) -> list[int]:
    """The fewest chips ($100, $25, $5, $1) that make a whole-dollar stake, in dollars."""
    assert stake_cents % CENTS_PER_DOLLAR == 0
    dollars, chips = stake_cents // CENTS_PER_DOLLAR, []
    for chip in CHIPS_DOLLARS:
        count, dollars = divmod(dollars, chip)
        chips += [chip] * count
    return chips


def check_certification(settings: GameSettings, shoe_prefix: object) -> None:
    """A requested shoe is for certification only (API.md, Conventions)."""
    if shoe_prefix is None:
        return
    if not settings.test_mode:
        raise TestModeDisabled("a shoe may only be chosen in certification mode")
    if not isinstance(shoe_prefix, list) or len(shoe_prefix) > SHOE_PREFIX_CARDS_MAX:
        raise InvalidShoe(f"shoe must be a list of at most {SHOE_PREFIX_CARDS_MAX} cards")
    if not all(isinstance(card, str) for card in shoe_prefix):
        raise InvalidShoe('every card of the shoe must be a string such as "10" or "QH"')


def check_shoe_prefix(prefix: Sequence[str], seed_hex: str, decks: int) -> None:
    """Refuse a certification shoe that the decks cannot hold (422 invalid_shoe)."""
    try:
        committed_shoe(seed_hex, decks, prefix)
    except (InvalidCard, CardNotInShoe) as error:
        raise InvalidShoe(str(error)) from None
