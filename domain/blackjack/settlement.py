"""Settling a finished blackjack round (rules.md 3): each hand against the dealer's
final cards, insurance and even money, by the rules the round was played by.

Pure functions over the play state of `domain/blackjack/play.py`; the same state
always settles the same, so an auditor who plays a round again gets its payouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from domain.blackjack.hands import (
    OUTCOME_EVEN_MONEY,
    hand_outcome,
    is_bust,
    outcome_net_cents,
    settle_insurance,
)
from domain.blackjack.state import HAND_CARDS_MAX, PHASE_OVER, Box, Hand, PlayState


@dataclass(frozen=True)
class Ruleset:
    """The rules a round is played by, named in its Opened event, so that a round is
    always settled and audited by the rules of the day it was played."""

    name: str
    # rules.md 3, since seed 002 was read again: insurance pays only on a box that
    # did not bust. Rounds played before that paid it whatever the box did.
    insurance_needs_unbusted_box: bool


RULESETS = {
    "baden-baden@1": Ruleset("baden-baden@1", insurance_needs_unbusted_box=False),
    "baden-baden@2": Ruleset("baden-baden@2", insurance_needs_unbusted_box=True),
}
RULESET = RULESETS["baden-baden@2"]  # what new rounds are played by


class HandSettlement(TypedDict):
    outcome: str
    stake_cents: int  # the hand's final stake, doubled if it was
    net_cents: int


class BoxSettlement(TypedDict):
    box_number: int
    hands: list[HandSettlement]
    insurance_net_cents: int
    net_cents: int


class RoundSettlement(TypedDict):
    boxes: list[BoxSettlement]
    total_net_cents: int


def settle_round(state: PlayState, ruleset: Ruleset = RULESET) -> RoundSettlement:
    """Net cents per box and hand, for the player; the same state always settles the same."""
    if state["phase"] != PHASE_OVER:
        raise ValueError(f"only a finished round settles, not one in phase {state['phase']!r}")
    boxes = [_settle_box(box, state["dealer_cards"], ruleset) for box in state["boxes"]]
    total = sum(box["net_cents"] for box in boxes)
    return RoundSettlement(boxes=boxes, total_net_cents=total)


def _settle_box(box: Box, dealer_cards: list[str], ruleset: Ruleset) -> BoxSettlement:
    hands = [_settle_hand(box, hand, dealer_cards) for hand in box["hands"]]
    # After a split the box is bust only when both its hands are.
    bust = all(is_bust(hand["cards"]) for hand in box["hands"])
    insurance = settle_insurance(
        box["insurance_cents"],
        dealer_cards,
        box_bust=bust and ruleset.insurance_needs_unbusted_box,
    )
    net = insurance + sum(hand["net_cents"] for hand in hands)
    return BoxSettlement(
        box_number=box["box_number"], hands=hands, insurance_net_cents=insurance, net_cents=net
    )


def _settle_hand(box: Box, hand: Hand, dealer_cards: list[str]) -> HandSettlement:
    assert hand["finished"] and len(hand["cards"]) <= HAND_CARDS_MAX
    if box["even_money_taken"]:
        outcome = OUTCOME_EVEN_MONEY
    else:
        outcome = hand_outcome(hand["cards"], split=hand["split"], dealer_cards=dealer_cards)
    stake = hand["stake_cents"]
    return HandSettlement(
        outcome=outcome, stake_cents=stake, net_cents=outcome_net_cents(outcome, stake)
    )


def wagered_cents(state: PlayState, ruleset: Ruleset = RULESET) -> int:
    """What a settled round counts towards a bonus's wagering (rules.md 9): every hand's
    final stake and every insurance stake, except those returned (a push)."""
    settled = settle_round(state, ruleset)
    counted = 0
    for box, result in zip(state["boxes"], settled["boxes"], strict=True):
        counted += sum(hand["stake_cents"] for hand in result["hands"] if hand["net_cents"])
        counted += box["insurance_cents"] if result["insurance_net_cents"] else 0
    return counted
