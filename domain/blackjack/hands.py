"""Blackjack Baden-Baden (rules.md section 3): hand arithmetic and settlement.

Pure functions over plain values. A card is a string such as "QH", "10S" or "A":
a rank, optionally followed by a suit letter, and suits never matter. Money is int
cents, seen from the player's side: a positive net is a win for the player. The play
state of a round (boxes, hands, turns, insurance) lives in `domain/blackjack_play.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain.errors import AboveTableMaximum, BelowTableMinimum, InvalidAmount, InvalidBox
from domain.money import format_cents, fraction_down

BOXES_MAX = 5
BLACKJACK_TOTAL = 21
DEALER_STANDS_FROM = 17
CHARLIE_CARDS = 6
DOUBLE_TOTALS = (9, 10, 11)

# What a settled hand came to; each maps to a net in `outcome_net_cents`.
OUTCOME_BLACKJACK = "blackjack"
OUTCOME_CHARLIE = "charlie"
OUTCOME_WIN = "win"
OUTCOME_PUSH = "push"
OUTCOME_LOSE = "lose"
OUTCOME_BUST = "bust"
OUTCOME_EVEN_MONEY = "even_money"
OUTCOMES = (
    OUTCOME_BLACKJACK,
    OUTCOME_CHARLIE,
    OUTCOME_WIN,
    OUTCOME_PUSH,
    OUTCOME_LOSE,
    OUTCOME_BUST,
    OUTCOME_EVEN_MONEY,
)

# An ace counts 1 here; `hand_value` counts one ace as 11 when that does not bust.
_RANK_POINTS = {
    "A": 1,
    "2": 2,
    "3": 3,
    "4": 4,
    "5": 5,
    "6": 6,
    "7": 7,
    "8": 8,
    "9": 9,
    "10": 10,
    "J": 10,
    "Q": 10,
    "K": 10,
}
_SUITS = ("S", "H", "D", "C")
# Every accepted spelling of a card, with or without its suit, mapped to its rank:
# one dictionary lookup per card keeps the simulation fast.
_CARD_RANKS = {rank + suit: rank for rank in _RANK_POINTS for suit in ("", *_SUITS)}
_ACE_EXTRA_POINTS = 10
BOX_NAMES = frozenset(str(number) for number in range(1, BOXES_MAX + 1))


@dataclass(frozen=True)
class HandValue:
    """The best total of a hand, and whether an ace in it is counted as 11."""

    total: int
    is_soft: bool


def _rank(card: str) -> str:
    """The rank of a card, its suit letter stripped: "10S" -> "10", "Q" -> "Q"."""
    try:
        return _CARD_RANKS[card]
    except KeyError:
        raise ValueError(f"unknown card {card!r}") from None


def card_points(card: str) -> int:
    """Points of one card: 2-10 face value, J/Q/K 10, ace 1 (see `hand_value` for 11)."""
    return _RANK_POINTS[_rank(card)]


def is_ten_valued(card: str) -> bool:
    """10, J, Q or K: the up cards on which the dealer checks for blackjack at once."""
    return card_points(card) == 10


def is_ace(card: str) -> bool:
    return _rank(card) == "A"


def same_rank(first: str, second: str) -> bool:
    """Two queens share a rank; K and 10 do not, although both count 10."""
    return _rank(first) == _rank(second)


def hand_value(cards: Sequence[str]) -> HandValue:
    hard_total = sum(card_points(card) for card in cards)
    # Two aces as 11 would be 22, so at most one ace ever counts 11.
    if hard_total + _ACE_EXTRA_POINTS <= BLACKJACK_TOTAL and any(map(is_ace, cards)):
        return HandValue(hard_total + _ACE_EXTRA_POINTS, is_soft=True)
    return HandValue(hard_total, is_soft=False)


def is_blackjack(cards: Sequence[str], split: bool) -> bool:
    """An ace and a ten-valued card as the first two cards of an unsplit hand."""
    return not split and len(cards) == 2 and hand_value(cards).total == BLACKJACK_TOTAL


def is_bust(cards: Sequence[str]) -> bool:
    return hand_value(cards).total > BLACKJACK_TOTAL


def is_six_card_charlie(cards: Sequence[str]) -> bool:
    """Six or more cards not over 21: the hand wins at once, paid 1:1."""
    return len(cards) >= CHARLIE_CARDS and not is_bust(cards)


def dealer_needs_card(dealer_cards: Sequence[str]) -> bool:
    """The dealer draws on 16 or less and stands on every 17 or more, soft 17 included."""
    return hand_value(dealer_cards).total < DEALER_STANDS_FROM


def validate_box_number(box_number: object) -> int:
    """Boxes are numbered 1 to BOXES_MAX; anything else is a client mistake."""
    if (
        isinstance(box_number, bool)
        or not isinstance(box_number, int)
        or not 1 <= box_number <= BOXES_MAX
    ):
        raise InvalidBox(f"box must be a number from 1 to {BOXES_MAX}, not {box_number!r}")
    return box_number


def parse_box(target: str) -> int:
    """A box number from the path or body of a round command ("3" -> 3)."""
    if target not in BOX_NAMES:
        raise InvalidBox(f"box must be a number from 1 to {BOXES_MAX}, not {target[:20]!r}")
    return int(target)


def check_bet(box: int, amount_cents: int, box_stake_cents: int, limits: tuple[int, int]) -> None:
    """A bet on a box, before the deal: the box's stake after it must lie within the
    hall's limits per box (rules.md 3)."""
    validate_box_number(box)
    if amount_cents <= 0:
        raise InvalidAmount("a stake must be greater than zero")
    stake_min, stake_max = limits
    after = box_stake_cents + amount_cents
    if after < stake_min:
        raise BelowTableMinimum(
            f"box {box} would hold {format_cents(after)}, below the hall "
            f"minimum of {format_cents(stake_min)} per box",
            minimum=format_cents(stake_min),
        )
    if after > stake_max:
        raise AboveTableMaximum(
            f"box {box} would hold {format_cents(after)}, above the hall "
            f"maximum of {format_cents(stake_max)} per box",
            maximum=format_cents(stake_max),
            box_stake=format_cents(box_stake_cents),
        )


def hand_outcome(cards: Sequence[str], *, split: bool, dealer_cards: Sequence[str]) -> str:
    """How a finished hand fares against the dealer's final cards."""
    if is_bust(cards):
        return OUTCOME_BUST
    player_blackjack = is_blackjack(cards, split)
    # A dealer blackjack beats doubled, split and six-card hands alike (rules.md Decision).
    if is_blackjack(dealer_cards, split=False):
        return OUTCOME_PUSH if player_blackjack else OUTCOME_LOSE
    if player_blackjack:
        return OUTCOME_BLACKJACK
    # Charlie wins whatever the dealer draws later, a 21 of three or more cards included.
    if is_six_card_charlie(cards):
        return OUTCOME_CHARLIE
    return _compare_totals(hand_value(cards).total, hand_value(dealer_cards).total)


def _compare_totals(player_total: int, dealer_total: int) -> str:
    if dealer_total > BLACKJACK_TOTAL or player_total > dealer_total:
        return OUTCOME_WIN
    if player_total == dealer_total:
        return OUTCOME_PUSH
    return OUTCOME_LOSE


def outcome_net_cents(outcome: str, stake_cents: int) -> int:
    """The player's net for a hand: the stake is returned on a push and kept on a win."""
    assert stake_cents > 0
    if outcome == OUTCOME_BLACKJACK:
        # Blackjack pays 3:2, cents rounded down in the house's favour: 15 cents win 22.
        return fraction_down(stake_cents, 3, 2)
    if outcome in (OUTCOME_WIN, OUTCOME_CHARLIE, OUTCOME_EVEN_MONEY):
        return stake_cents
    if outcome == OUTCOME_PUSH:
        return 0
    assert outcome in (OUTCOME_LOSE, OUTCOME_BUST), outcome
    return -stake_cents


def settle_hand(
    cards: Sequence[str], stake_cents: int, *, split: bool, dealer_cards: Sequence[str]
) -> int:
    """Net cents for one finished hand; stake_cents is the hand's stake, doubled if it was."""
    outcome = hand_outcome(cards, split=split, dealer_cards=dealer_cards)
    return outcome_net_cents(outcome, stake_cents)


def insurance_stake_cents(box_stake_cents: int) -> int:
    """Insurance costs half the box's bet, rounded down to the cent: 15 cents insure for 7."""
    return fraction_down(box_stake_cents, 1, 2)


def settle_insurance(
    insurance_cents: int, dealer_cards: Sequence[str], *, box_bust: bool = False
) -> int:
    """Insurance pays 2:1 when the dealer has blackjack and the insured box did not bust
    (rules.md 3: the dealer does not look, so the box plays on first); it is lost
    otherwise. A split box counts as bust only when both its hands bust."""
    assert insurance_cents >= 0
    if is_blackjack(dealer_cards, split=False) and not box_bust:
        return 2 * insurance_cents
    return -insurance_cents


def settle_even_money(box_stake_cents: int) -> int:
    """Even money pays 1:1 on the box's stake at once, whatever the dealer holds."""
    return outcome_net_cents(OUTCOME_EVEN_MONEY, box_stake_cents)
