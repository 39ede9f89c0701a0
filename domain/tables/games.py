"""The rules of each multi-player table game (rules.md 2.2-2.4), as plain values and
pure functions: its seats, the spots a bet names, the order the first cards are
dealt, and its tableau, which says at every moment what happens next in a coup.

A tableau looks at the cards each hand holds and the choices made so far, and
answers one step: draw a card to a hand, ask someone to choose, or the coup is
over. The coup aggregate plays a coup by asking it again and again, so a game
with choices (chemin de fer, en banque) and one without (punto banco) play on
the same ground.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from domain.baccarat.rules import (
    BANKER,
    PLAYER,
    TIE,
    banker_draws,
    bet_net_cents,
    card_value,
    hand_total,
    is_natural,
    outcome_of,
    player_draws,
)
from domain.errors import UnknownSeat, UnknownSpot

PUNTO_BANCO = "punto_banco"
DRAW, STAND = "draw", "stand"


@dataclass(frozen=True)
class Draw:
    """Deal the next card of the shoe to this hand."""

    hand: str


@dataclass(frozen=True)
class Choice:
    """Whoever plays `chooser` chooses among `actions` for `hand`; the system, not in
    time or for someone away, chooses `default`."""

    hand: str
    chooser: str
    actions: tuple[str, ...]
    default: str


@dataclass(frozen=True)
class Over:
    outcome: str  # the winning hand, or "tie"


Step = Draw | Choice | Over
Tableau = Callable[[Mapping[str, Sequence[str]], Mapping[str, str]], Step]
# Who plays each hand whose choices someone owes, from the bets (player -> spot ->
# cents) and the players in play order: chooser -> player id.
Choosers = Callable[[Mapping[str, Mapping[str, int]], Sequence[str]], dict[str, str]]


def nobody_chooses(bets: Mapping[str, Mapping[str, int]], order: Sequence[str]) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class TableGameRules:
    name: str
    seats: tuple[str, ...]
    spots: tuple[str, ...]
    deal_order: tuple[str, ...]  # the first cards: which hand each goes to
    tableau: Tableau
    # What a bet on a spot wins (+), loses (-stake) or pushes (0), the coup over.
    bet_net: Callable[[str, int, str, int], int]
    choosers: Choosers = nobody_chooses

    def check_seat(self, seat: str) -> None:
        if seat not in self.seats:
            raise UnknownSeat(
                f"{seat[:20]!r} is no seat at a {self.name} table: "
                f"the seats are {', '.join(self.seats)}"
            )

    def check_spot(self, spot: str) -> None:
        if spot not in self.spots:
            raise UnknownSpot(
                f"{spot[:40]!r} is not a spot at a {self.name} table: "
                f"bet on {', '.join(self.spots)}"
            )


def punto_banco_tableau(hands: Mapping[str, Sequence[str]], choices: Mapping[str, str]) -> Step:
    """Punto banco (rules.md 2): naturals stand, then the Player's and the Banker's
    fixed rules; nobody ever chooses."""
    player, banker = hands[PLAYER], hands[BANKER]
    two_card = (hand_total(player[:2]), hand_total(banker[:2]))
    if not any(map(is_natural, two_card)):
        if len(player) == 2 and len(banker) == 2 and player_draws(two_card[0]):
            return Draw(PLAYER)
        third = card_value(player[2]) if len(player) == 3 else None
        if len(banker) == 2 and banker_draws(two_card[1], third):
            return Draw(BANKER)
    return Over(outcome_of(hand_total(player), hand_total(banker)))


# American baccarat (seed 004): seats 1-15 without 13, fourteen players at most.
PUNTO_BANCO_RULES = TableGameRules(
    name=PUNTO_BANCO,
    seats=tuple(str(seat) for seat in range(1, 16) if seat != 13),
    spots=(PLAYER, BANKER, TIE),
    deal_order=(PLAYER, BANKER, PLAYER, BANKER),
    tableau=punto_banco_tableau,
    bet_net=bet_net_cents,
)

RULES: dict[str, TableGameRules] = {PUNTO_BANCO: PUNTO_BANCO_RULES}


def rules_of(game: str) -> TableGameRules:
    return RULES[game]
