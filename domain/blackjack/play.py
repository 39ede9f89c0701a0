"""Blackjack Baden-Baden play (RULES.md section 3): the deal, insurance, turns, the dealer.

This is the one home of what is legal: `illegal_reason` says whether an action may
be taken now and why not, `stake_added` what it must hold on top of the bets. The
round decides an action with them once, in its command; the event that records
the decision then applies it with `apply_action`, which checks nothing again.

The play state is plain JSON data (dicts of str, int, bool and lists) so that a round
aggregate can hold it and rebuild it from its events. Every step is a pure function that
returns a new state and leaves its argument untouched, so replaying events is safe. The
cards each step needs are passed in: the aggregate takes them from its committed shoe.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from domain.blackjack.hands import (
    BOXES_MAX,
    DOUBLE_TOTALS,
    OUTCOME_EVEN_MONEY,
    dealer_needs_card,
    hand_outcome,
    hand_value,
    insurance_stake_cents,
    is_ace,
    is_blackjack,
    is_bust,
    is_six_card_charlie,
    is_ten_valued,
    outcome_net_cents,
    same_rank,
    settle_insurance,
    validate_box_number,
)
from domain.errors import IllegalAction

# Phases of play, in order; a round may skip some (no ace up: no insurance phase).
PHASE_INSURANCE = "insurance"
PHASE_PLAYERS = "players"
PHASE_DEALER = "dealer"
PHASE_OVER = "over"

HIT = "hit"
STAND = "stand"
DOUBLE = "double"
SPLIT = "split"
INSURANCE = "insurance"
NO_INSURANCE = "no_insurance"
EVEN_MONEY = "even_money"
ACTIONS = (HIT, STAND, DOUBLE, SPLIT, INSURANCE, NO_INSURANCE, EVEN_MONEY)
INSURANCE_ACTIONS = (INSURANCE, NO_INSURANCE, EVEN_MONEY)
_CARDS_NEEDED = {HIT: 1, DOUBLE: 1, SPLIT: 2}

# In the deal order the dealer is recipient 0; boxes are 1..BOXES_MAX.
DEALER = 0
# Play stops at six cards (Charlie or bust), and a dealer standing on 17 cannot draw more
# than eleven cards from two decks (six aces, 6, A, A, 2, 2): anything longer is a bug.
HAND_CARDS_MAX = 6
DEALER_CARDS_MAX = 11


@dataclass(frozen=True)
class Ruleset:
    """The rules a round is played by, named in its Opened event, so that a round is
    always settled and audited by the rules of the day it was played."""

    name: str
    # RULES.md 3, since seed 002 was read again: insurance pays only on a box that
    # did not bust. Rounds played before that paid it whatever the box did.
    insurance_needs_unbusted_box: bool


RULESETS = {
    "baden-baden@1": Ruleset("baden-baden@1", insurance_needs_unbusted_box=False),
    "baden-baden@2": Ruleset("baden-baden@2", insurance_needs_unbusted_box=True),
}
RULESET = RULESETS["baden-baden@2"]  # what new rounds are played by


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


@dataclass(frozen=True)
class DealSlot:
    """The card at shoe_index of the initial deal goes to this box (DEALER is 0)."""

    shoe_index: int
    box_number: int


@dataclass(frozen=True)
class Turn:
    box_number: int
    hand_index: int


def deal_order(box_numbers: Sequence[int]) -> list[DealSlot]:
    """Box 1..5 a first card each, the dealer's up card, box second cards, the hole card."""
    boxes = sorted(validate_box_number(number) for number in box_numbers)
    recipients = [*boxes, DEALER, *boxes, DEALER]
    return [DealSlot(index, recipient) for index, recipient in enumerate(recipients)]


def initial_cards_needed(box_count: int) -> int:
    return 2 * box_count + 2


def cards_needed(action: str) -> int:
    """Cards an action takes from the shoe: a hit or double one, a split one per hand."""
    return _CARDS_NEEDED.get(action, 0)


def start_play(box_stakes: Mapping[int, int], cards: Sequence[str]) -> PlayState:
    """The state right after the initial deal; cards are in shoe order."""
    if not 1 <= len(box_stakes) <= BOXES_MAX:
        raise ValueError(f"a round has 1 to {BOXES_MAX} boxes, not {len(box_stakes)}")
    if any(stake <= 0 for stake in box_stakes.values()):
        raise ValueError("every box stake must be positive")
    slots = deal_order(list(box_stakes))
    if len(cards) != len(slots):
        raise ValueError(f"the deal takes {len(slots)} cards, not {len(cards)}")
    boxes = [_new_box(number, box_stakes[number]) for number in sorted(box_stakes)]
    state = PlayState(phase=PHASE_PLAYERS, boxes=boxes, dealer_cards=[])
    for slot, card in zip(slots, cards, strict=True):
        _receiver(state, slot.box_number).append(card)
    return _after_deal(state)


def _new_box(box_number: int, stake_cents: int) -> Box:
    return Box(
        box_number=box_number,
        stake_cents=stake_cents,
        hands=[_new_hand([], stake_cents, split=False)],
        insurance_decided=False,
        insurance_cents=0,
        even_money_taken=False,
    )


def _new_hand(cards: list[str], stake_cents: int, *, split: bool) -> Hand:
    return Hand(cards=cards, stake_cents=stake_cents, doubled=False, split=split, finished=False)


def _receiver(state: PlayState, box_number: int) -> list[str]:
    if box_number == DEALER:
        return state["dealer_cards"]
    return _box(state, box_number)["hands"][0]["cards"]


def _after_deal(state: PlayState) -> PlayState:
    for box in state["boxes"]:
        # A blackjack has nothing left to play; with an ace up it still answers even money.
        box["hands"][0]["finished"] = is_blackjack(box["hands"][0]["cards"], split=False)
    up_card = state["dealer_cards"][0]
    if is_ten_valued(up_card) and is_blackjack(state["dealer_cards"], split=False):
        # The dealer checks a ten-valued up card at once: a blackjack ends the round.
        for box in state["boxes"]:
            box["hands"][0]["finished"] = True
        state["phase"] = PHASE_OVER
        return state
    # With an ace up the dealer does not peek: insurance first, and play goes on.
    state["phase"] = PHASE_INSURANCE if is_ace(up_card) else PHASE_PLAYERS
    return _advance(state)


def _advance(state: PlayState) -> PlayState:
    """Move to the next phase once nobody is left to act in this one."""
    if state["phase"] == PHASE_INSURANCE and all(b["insurance_decided"] for b in state["boxes"]):
        state["phase"] = PHASE_PLAYERS
    if state["phase"] == PHASE_PLAYERS and next_turn(state) is None:
        state["phase"] = PHASE_DEALER
    if state["phase"] == PHASE_DEALER and not _dealer_must_draw(state):
        state["phase"] = PHASE_OVER
    return state


def _dealer_must_draw(state: PlayState) -> bool:
    """The dealer draws only while a standing hand's result still depends on it."""
    if not dealer_needs_card(state["dealer_cards"]):
        return False
    return any(_awaits_dealer(box, hand) for box in state["boxes"] for hand in box["hands"])


def _awaits_dealer(box: Box, hand: Hand) -> bool:
    # Busts, blackjacks, Charlies and even money are decided whatever the dealer draws.
    cards = hand["cards"]
    decided = is_bust(cards) or is_six_card_charlie(cards) or box["even_money_taken"]
    return not decided and not is_blackjack(cards, hand["split"])


def _box(state: PlayState, box_number: int) -> Box:
    box = _find_box(state, box_number)
    assert box is not None, box_number
    return box


def _find_box(state: PlayState, box_number: int) -> Box | None:
    return next((box for box in state["boxes"] if box["box_number"] == box_number), None)


def next_turn(state: PlayState) -> Turn | None:
    """Who acts next: every box's insurance first, then boxes 1..5, hand 0 before hand 1."""
    if state["phase"] == PHASE_INSURANCE:
        undecided = (box for box in state["boxes"] if not box["insurance_decided"])
        return next((Turn(box["box_number"], 0) for box in undecided), None)
    if state["phase"] != PHASE_PLAYERS:
        return None
    open_hands = (
        Turn(box["box_number"], index)
        for box in state["boxes"]
        for index, hand in enumerate(box["hands"])
        if not hand["finished"]
    )
    return next(open_hands, None)


def legal_actions(state: PlayState, box_number: int, hand_index: int) -> list[str]:
    return [
        action
        for action in ACTIONS
        if illegal_reason(state, box_number, hand_index, action) is None
    ]


def illegal_reason(state: PlayState, box_number: int, hand_index: int, action: str) -> str | None:
    """None when the action is legal now, else a short sentence saying why it is not."""
    if action not in ACTIONS:
        return f"{action!r} is not a blackjack action; choose one of {', '.join(ACTIONS)}"
    box = _find_box(state, box_number)
    if box is None:
        return f"box {box_number} has no bet in this round"
    if not 0 <= hand_index < len(box["hands"]):
        return f"box {box_number} has no hand {hand_index}"
    reason = _phase_reason(state, action) or _turn_reason(state, box_number, hand_index)
    if reason is not None:
        return reason
    if action in INSURANCE_ACTIONS:
        return _insurance_reason(box, action)
    return _play_reason(box, box["hands"][hand_index], action)


def _phase_reason(state: PlayState, action: str) -> str | None:
    phase = state["phase"]
    if phase == PHASE_OVER:
        return "the round is over"
    if phase == PHASE_DEALER:
        return "the players have finished; the dealer is playing"
    if phase == PHASE_INSURANCE and action not in INSURANCE_ACTIONS:
        return "insurance comes first: answer insurance, no_insurance or even_money"
    if phase == PHASE_PLAYERS and action in INSURANCE_ACTIONS:
        return "insurance is offered only right after the deal, when the dealer shows an ace"
    return None


def _turn_reason(state: PlayState, box_number: int, hand_index: int) -> str | None:
    turn = next_turn(state)
    assert turn is not None, "a phase with players to act always has a next turn"
    if turn == Turn(box_number, hand_index):
        return None
    return f"it is the turn of box {turn.box_number}, hand {turn.hand_index}"


def _insurance_reason(box: Box, action: str) -> str | None:
    blackjack = is_blackjack(box["hands"][0]["cards"], split=False)
    if action == EVEN_MONEY and not blackjack:
        return "even money is offered only to a box holding a blackjack"
    if action == INSURANCE and blackjack:
        return "a box holding a blackjack is offered even money, not insurance"
    if action == INSURANCE and insurance_stake_cents(box["stake_cents"]) == 0:
        return "the stake is too small to insure: half of it is less than a cent"
    return None


def _play_reason(box: Box, hand: Hand, action: str) -> str | None:
    if action == DOUBLE:
        return _double_reason(hand)
    if action == SPLIT:
        return _split_reason(box, hand)
    return None


def _double_reason(hand: Hand) -> str | None:
    if hand["split"]:
        return "a split hand cannot double"
    if len(hand["cards"]) != 2:
        return "a hand can double only on its first two cards"
    value = hand_value(hand["cards"])
    if value.is_soft:
        return f"a soft {value.total} cannot double; only a hard 9, 10 or 11 can"
    if value.total not in DOUBLE_TOTALS:
        return f"a hand can double only on a total of 9, 10 or 11, not {value.total}"
    return None


def _split_reason(box: Box, hand: Hand) -> str | None:
    if len(box["hands"]) > 1:
        return "a box can split only once"
    if len(hand["cards"]) != 2:
        return "a hand can split only its first two cards"
    first, second = hand["cards"]
    if not same_rank(first, second):
        return f"only two cards of the same rank can split, not {first} and {second}"
    return None


def check_action(state: PlayState, box_number: int, hand_index: int, action: str) -> None:
    """Refuse an action the rules do not allow now (409 illegal_action, naming why)."""
    reason = illegal_reason(state, box_number, hand_index, action)
    if reason is not None:
        raise IllegalAction(reason, box=box_number, hand=hand_index, action=action)


def stake_added(state: PlayState, box_number: int, hand_index: int, action: str) -> int:
    """What a legal action holds on top of the bets: a double the hand's stake, a split
    the box's bet, insurance half the bet (rounded down); nothing else adds any."""
    box = _box(state, box_number)
    if action == DOUBLE:
        return box["hands"][hand_index]["stake_cents"]
    if action == SPLIT:
        return box["stake_cents"]
    if action == INSURANCE:
        return insurance_stake_cents(box["stake_cents"])
    return 0


def apply_action(
    state: PlayState, box_number: int, hand_index: int, action: str, cards: Sequence[str] = ()
) -> PlayState:
    """The state after a decided action (see `check_action`); cards come from the shoe."""
    if len(cards) != cards_needed(action):
        raise ValueError(f"{action} takes {cards_needed(action)} cards, not {len(cards)}")
    after = copy.deepcopy(state)
    box = _box(after, box_number)
    _STEPS[action](box, hand_index, list(cards))
    return _advance(after)


def _hit(box: Box, hand_index: int, cards: list[str]) -> None:
    hand = box["hands"][hand_index]
    hand["cards"].extend(cards)
    assert len(hand["cards"]) <= HAND_CARDS_MAX
    # Bust loses and six cards not over 21 win at once: either way the hand is over.
    hand["finished"] = is_bust(hand["cards"]) or is_six_card_charlie(hand["cards"])


def _stand(box: Box, hand_index: int, cards: list[str]) -> None:
    box["hands"][hand_index]["finished"] = True


def _double(box: Box, hand_index: int, cards: list[str]) -> None:
    hand = box["hands"][hand_index]
    # The stake doubles and exactly one more card is dealt.
    hand["stake_cents"] *= 2
    hand["doubled"] = True
    hand["cards"].extend(cards)
    hand["finished"] = True


def _split(box: Box, hand_index: int, cards: list[str]) -> None:
    # Each hand gets its second card at once, so a split is one step in the shoe.
    stake = box["stake_cents"]
    box["hands"] = [
        _new_hand([original, drawn], stake, split=True)
        for original, drawn in zip(box["hands"][hand_index]["cards"], cards, strict=True)
    ]


def _insure(box: Box, hand_index: int, cards: list[str]) -> None:
    box["insurance_cents"] = insurance_stake_cents(box["stake_cents"])
    box["insurance_decided"] = True


def _decline_insurance(box: Box, hand_index: int, cards: list[str]) -> None:
    box["insurance_decided"] = True


def _take_even_money(box: Box, hand_index: int, cards: list[str]) -> None:
    # Even money pays at once and closes the box: its blackjack no longer meets the dealer.
    box["even_money_taken"] = True
    box["insurance_decided"] = True
    box["hands"][0]["finished"] = True


_STEPS = {
    HIT: _hit,
    STAND: _stand,
    DOUBLE: _double,
    SPLIT: _split,
    INSURANCE: _insure,
    NO_INSURANCE: _decline_insurance,
    EVEN_MONEY: _take_even_money,
}


def deal_dealer_card(state: PlayState, card: str) -> PlayState:
    """The dealer draws one card; call it while the phase is "dealer"."""
    if state["phase"] != PHASE_DEALER:
        raise ValueError(f"the dealer draws only in the dealer phase, not {state['phase']!r}")
    after = copy.deepcopy(state)
    after["dealer_cards"].append(card)
    assert len(after["dealer_cards"]) <= DEALER_CARDS_MAX
    return _advance(after)


def visible_dealer_cards(state: PlayState) -> list[str]:
    """What players may see: the hole card stays hidden until the dealer plays."""
    if state["phase"] in (PHASE_INSURANCE, PHASE_PLAYERS):
        return state["dealer_cards"][:1]
    return list(state["dealer_cards"])


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
