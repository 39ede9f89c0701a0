"""The play state of a blackjack round: plain JSON data (dicts of str, int, bool and
lists), so that a round aggregate can hold it and rebuild it from its events. What
may be done with it is `domain/blackjack/play.py`'s to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

# Phases of play, in order; a round may skip some (no ace up: no insurance phase).
PHASE_INSURANCE = "insurance"
PHASE_PLAYERS = "players"
PHASE_DEALER = "dealer"
PHASE_OVER = "over"

# In the deal order the dealer is recipient 0; boxes are 1..BOXES_MAX.
DEALER = 0
# Play stops at six cards (Charlie or bust), and a dealer standing on 17 cannot draw more
# than eleven cards from two decks (six aces, 6, A, A, 2, 2): anything longer is a bug.
HAND_CARDS_MAX = 6
DEALER_CARDS_MAX = 11


class Hand(TypedDict):
    cards: list[str]
    stake_cents: int  # doubled when the hand doubles
    doubled: bool
    split: bool  # born of a split: cannot double, and 21 is not a blackjack
    finished: bool


class Box(TypedDict):
    box_number: int
    stake_cents: int  # the bet placed before the deal
    hands: list[Hand]  # one, or two after a split
    insurance_decided: bool
    insurance_cents: int  # 0 when declined or never offered
    even_money_taken: bool


class PlayState(TypedDict):
    phase: str
    boxes: list[Box]  # in box number order
    dealer_cards: list[str]  # up card first, then the hole card, then draws


@dataclass(frozen=True)
class DealSlot:
    """The card at shoe_index of the initial deal goes to this box (DEALER is 0)."""

    shoe_index: int
    box_number: int


@dataclass(frozen=True)
class Turn:
    box_number: int
    hand_index: int


@dataclass(frozen=True)
class Decision:
    """An action the rules allow now, with what it holds and the cards it takes."""

    box: int
    hand: int
    action: str
    cards: list[str]
    added_stake_cents: int
    by: str
