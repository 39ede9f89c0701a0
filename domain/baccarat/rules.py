"""Baccarat rules (rules.md section 2): card values, the coup, what each bet wins,
stakes in chips, the P2P commission, dealer points and the dealer's worst case.

Pure functions over plain values. Cards are the canonical strings of
`domain/cards.py`; outcomes and spots are the plain strings "player",
"banker" and "tie", so that they can be stored in events as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from domain.cards import DECKS_MAX, RANKS, SUITS, InvalidCard
from domain.errors import InvalidStake, UnknownSpot
from domain.money import CENTS_PER_DOLLAR, basis_points_half_up, format_cents, fraction_down
from domain.tables.tableau import Draw, Hands, Over, Step

PLAYER = "player"
BANKER = "banker"
TIE = "tie"
SPOTS: tuple[str, ...] = (PLAYER, BANKER, TIE)
DEAL_ORDER: tuple[str, ...] = (PLAYER, BANKER, PLAYER, BANKER)  # the first four cards
OUTCOMES: tuple[str, ...] = (PLAYER, BANKER, TIE)

# A winning banker bet is paid 1:1 less 5% commission.
BANKER_PAYS_NUMERATOR = 19
BANKER_PAYS_DENOMINATOR = 20
TIE_PAYS_MAX = 100
CHIPS_DOLLARS = (100, 25, 5, 1)  # Largest first: a stake is shown as the fewest chips.

_RANK_VALUES = {"A": 1, "10": 0, "J": 0, "Q": 0, "K": 0} | {str(n): n for n in range(2, 10)}
# Every canonical card and bare rank -> value: one lookup per card in bulk checks.
_CARD_VALUES = {rank: _RANK_VALUES[rank] for rank in RANKS} | {
    rank + suit: _RANK_VALUES[rank] for rank in RANKS for suit in SUITS
}
_NATURAL_TOTAL_MIN = 8
_STANDS_TOTAL_MIN = 6
_ALL_VALUES = frozenset(range(10))
# Banker total -> values of the Player's third card on which the Banker draws.
_BANKER_DRAWS_AGAINST: dict[int, frozenset[int]] = {
    0: _ALL_VALUES,
    1: _ALL_VALUES,
    2: _ALL_VALUES,
    3: _ALL_VALUES - {8},
    4: frozenset(range(2, 8)),
    5: frozenset(range(4, 8)),
    6: frozenset({6, 7}),
    7: frozenset(),
}


class NotEnoughCards(ValueError):
    """The cards ran out before the coup was complete."""


def card_value(card: str) -> int:
    """A = 1, 2-9 = face value, 10/J/Q/K = 0, for a canonical card ("QH" or "Q")."""
    value = _CARD_VALUES.get(card)
    if value is None:
        raise InvalidCard(f'{card!r} is not a canonical card such as "QH" or "10"')
    return value


def hand_total(cards: Sequence[str]) -> int:
    """The sum of the card values, modulo 10."""
    try:
        return sum(map(_CARD_VALUES.__getitem__, cards)) % 10
    except KeyError:
        # The slow path only runs to name the bad card.
        return sum(map(card_value, cards)) % 10


def is_natural(total: int) -> bool:
    """A two-card 8 or 9 ends the coup for both hands."""
    return total >= _NATURAL_TOTAL_MIN


def player_draws(player_total: int) -> bool:
    """The Player draws on 0-5 and stands on 6-7."""
    return player_total < _STANDS_TOTAL_MIN


def banker_draws(banker_total: int, player_third_value: int | None) -> bool:
    """The Banker's tableau; `player_third_value` is None when the Player stood."""
    if player_third_value is None:
        return banker_total < _STANDS_TOTAL_MIN
    return player_third_value in _BANKER_DRAWS_AGAINST.get(banker_total, frozenset())


def outcome_of(player_total: int, banker_total: int) -> str:
    """Higher total wins; equal totals tie."""
    if player_total == banker_total:
        return TIE
    return PLAYER if player_total > banker_total else BANKER


@dataclass(frozen=True, slots=True)
class Coup:
    """One complete coup: the cards each hand received, in order, and the result."""

    player_cards: tuple[str, ...]
    banker_cards: tuple[str, ...]
    player_total: int
    banker_total: int
    outcome: str

    def __post_init__(self) -> None:
        assert 2 <= len(self.player_cards) <= 3 and 2 <= len(self.banker_cards) <= 3
        assert self.player_total == hand_total(self.player_cards)
        assert self.banker_total == hand_total(self.banker_cards)
        assert self.outcome == outcome_of(self.player_total, self.banker_total)

    @property
    def cards_used(self) -> int:
        return len(self.player_cards) + len(self.banker_cards)

    @property
    def player_drew_third(self) -> bool:
        return len(self.player_cards) == 3

    @property
    def banker_drew_third(self) -> bool:
        return len(self.banker_cards) == 3

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of api.md, with lists rather than tuples."""
        return {
            PLAYER: {"cards": list(self.player_cards), "total": self.player_total},
            BANKER: {"cards": list(self.banker_cards), "total": self.banker_total},
            "outcome": self.outcome,
        }


def punto_banco_tableau(
    hands: Hands, choices: Mapping[str, str], stakes: Mapping[str, int]
) -> Step:
    """Punto banco's tableau, the one every coup without choices is played by: naturals
    stand, then the Player's and the Banker's fixed rules; nobody ever chooses."""
    player, banker = hands[PLAYER], hands[BANKER]
    two_card = (hand_total(player[:2]), hand_total(banker[:2]))
    if not any(map(is_natural, two_card)):
        if len(player) == 2 and len(banker) == 2 and player_draws(two_card[0]):
            return Draw(PLAYER)
        third = card_value(player[2]) if len(player) == 3 else None
        if len(banker) == 2 and banker_draws(two_card[1], third):
            return Draw(BANKER)
    return Over(outcome_of(hand_total(player), hand_total(banker)))


def play_coup(cards: Sequence[str]) -> Coup:
    """Deal P, B, P, B from `cards`, then the third cards the tableau calls for.

    Cards beyond those the coup uses are ignored.
    """
    hands: dict[str, list[str]] = {PLAYER: [], BANKER: []}
    for position, hand in enumerate(DEAL_ORDER):
        hands[hand].append(_card_at(cards, position))
    step = punto_banco_tableau(hands, {}, {})
    while isinstance(step, Draw):
        hands[step.hand].append(_card_at(cards, len(hands[PLAYER]) + len(hands[BANKER])))
        step = punto_banco_tableau(hands, {}, {})
    return _finished_coup(hands[PLAYER], hands[BANKER])


def _card_at(cards: Sequence[str], index: int) -> str:
    if index >= len(cards):
        raise NotEnoughCards(f"the coup needs card {index + 1} but only {len(cards)} were given")
    return cards[index]


def _finished_coup(player: list[str], banker: list[str]) -> Coup:
    player_total, banker_total = hand_total(player), hand_total(banker)
    outcome = outcome_of(player_total, banker_total)
    return Coup(tuple(player), tuple(banker), player_total, banker_total, outcome)


@dataclass(frozen=True, slots=True)
class BaccaratVariant:
    """A table's game: how many decks its shoe holds and what a tie pays (to 1)."""

    name: str
    decks: int
    tie_pays: int

    def __post_init__(self) -> None:
        if not 1 <= self.decks <= DECKS_MAX:
            raise ValueError(f"baccarat variant {self.name!r}: decks must be 1 to {DECKS_MAX}")
        if not 1 <= self.tie_pays <= TIE_PAYS_MAX:
            raise ValueError(f"baccarat variant {self.name!r}: tie pays 1 to {TIE_PAYS_MAX}")


P2P = BaccaratVariant(name="p2p", decks=6, tie_pays=9)
HOUSE = BaccaratVariant(name="house", decks=8, tie_pays=8)
VARIANTS: dict[str, BaccaratVariant] = {P2P.name: P2P, HOUSE.name: HOUSE}


def check_spot(spot: str) -> None:
    if spot not in SPOTS:
        raise UnknownSpot(f"{spot[:40]!r} is not a spot: bet on player, banker or tie")


def check_chips(amount_cents: int) -> None:
    """Stakes are whole dollars, built from $1, $5, $25 and $100 chips (rules.md 2.1)."""
    if amount_cents <= 0 or amount_cents % CENTS_PER_DOLLAR:
        raise InvalidStake(
            f"a stake of {format_cents(amount_cents)} is not whole dollars: "
            "stakes are built from $1, $5, $25 and $100 chips"
        )


def chips_for(stake_cents: int) -> list[int]:
    """The fewest chips ($100, $25, $5, $1) that make a whole-dollar stake, in dollars."""
    assert stake_cents % CENTS_PER_DOLLAR == 0
    dollars, chips = stake_cents // CENTS_PER_DOLLAR, []
    for chip in CHIPS_DOLLARS:
        count, dollars = divmod(dollars, chip)
        chips += [chip] * count
    return chips


def bet_net_cents(spot: str, stake_cents: int, outcome: str, tie_pays: int) -> int:
    """What a settled bet wins (positive), loses (-stake) or pushes (0), in cents."""
    check_spot(spot)
    assert stake_cents > 0 and outcome in OUTCOMES and tie_pays > 0
    if spot == TIE:
        return stake_cents * tie_pays if outcome == TIE else -stake_cents
    if outcome == TIE:
        return 0  # Player and banker bets are returned on a tie.
    if spot != outcome:
        return -stake_cents
    if spot == BANKER:
        # Banker pays 19:20 (1:1 less 5%), a fractional cent rounded down.
        return fraction_down(stake_cents, BANKER_PAYS_NUMERATOR, BANKER_PAYS_DENOMINATOR)
    return stake_cents


def commission_cents(total_stake_cents: int, basis_points: int) -> int:
    """The casino's commission on a P2P round (rules.md 2.1): a rate (1.75% by default)
    of every stake placed against the dealer, pushes included, half up to the cent."""
    return basis_points_half_up(total_stake_cents, basis_points)


def points_for_stake(stake_cents: int) -> int:
    """Dealer points a baccarat stake moves: one per whole dollar (rules.md 2.1)."""
    return stake_cents // CENTS_PER_DOLLAR


def dealer_worst_case_cents(tie_pays: int, stake_max_cents: int, basis_points: int) -> int:
    """What one P2P round can cost its dealer at most: the table maximum staked on a
    winning tie, and the commission on it (rules.md 2.1: I $901.75 ...)."""
    return tie_pays * stake_max_cents + commission_cents(stake_max_cents, basis_points)
