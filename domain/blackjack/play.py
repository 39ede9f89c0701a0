"""Blackjack Baden-Baden play (rules.md section 3): the deal, insurance, turns, the dealer.

This is the one home of what is legal: `illegal_reason` says whether an action may
be taken now and why not, `stake_added` what it must hold on top of the bets. The
round decides an action with them once, in its command; the event that records
the decision then applies it with `apply_action`, which checks nothing again.

Every step is a pure function over the play state (`domain/blackjack/state.py`) that
returns a new state and leaves its argument untouched, so replaying events is safe. The
cards each step needs are passed in: the aggregate takes them from its committed shoe.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.blackjack.hands import (
    BOXES_MAX,
    DOUBLE_TOTALS,
    dealer_needs_card,
    hand_value,
    insurance_stake_cents,
    is_ace,
    is_blackjack,
    is_bust,
    is_six_card_charlie,
    same_rank,
    validate_box_number,
)
from domain.blackjack.hole_card import awaits_hole_card, hole_card_hidden, ten_up_blackjack
from domain.blackjack.state import (
    DEALER,
    DEALER_CARDS_MAX,
    HAND_CARDS_MAX,
    PHASE_DEALER,
    PHASE_INSURANCE,
    PHASE_OVER,
    PHASE_PLAYERS,
    Box,
    DealSlot,
    Hand,
    PlayState,
    Turn,
)
from domain.copying import copied
from domain.errors import IllegalAction

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
    """The state right after the initial deal; cards are in shoe order. The last, the
    hole card, may be left out: it then lies face down, not in the state, until the
    round turns it over (`turn_hole_card`; rules.md 5, no card of a round in play is
    stored in clear). Given, a ten-valued up card is checked for blackjack here."""
    if not 1 <= len(box_stakes) <= BOXES_MAX:
        raise ValueError(f"a round has 1 to {BOXES_MAX} boxes, not {len(box_stakes)}")
    if any(stake <= 0 for stake in box_stakes.values()):
        raise ValueError("every box stake must be positive")
    slots = deal_order(list(box_stakes))
    if len(cards) not in (len(slots) - 1, len(slots)):
        raise ValueError(f"the deal takes {len(slots)} cards, not {len(cards)}")
    boxes = [_new_box(number, box_stakes[number]) for number in sorted(box_stakes)]
    state = PlayState(phase=PHASE_PLAYERS, boxes=boxes, dealer_cards=[])
    for slot, card in zip(slots, cards, strict=False):  # the hole card may be missing
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
    if ten_up_blackjack(state["dealer_cards"]):
        return _end_on_dealer_blackjack(state)
    # With an ace up the dealer does not peek: insurance first, and play goes on.
    state["phase"] = PHASE_INSURANCE if is_ace(state["dealer_cards"][0]) else PHASE_PLAYERS
    return _advance(state)


def _end_on_dealer_blackjack(state: PlayState) -> PlayState:
    for box in state["boxes"]:
        box["hands"][0]["finished"] = True
    state["phase"] = PHASE_OVER
    return state


def turn_hole_card(state: PlayState, card: str) -> PlayState:
    """The dealer turns the hole card over: once the players are done, or at the deal
    when it makes a blackjack under a ten-valued up card, which ends the round."""
    if not awaits_hole_card(state):
        raise ValueError("the hole card is already face up")
    after: PlayState = copied(state, {})
    after["dealer_cards"].append(card)
    if after["phase"] == PHASE_DEALER:
        return _advance(after)
    if not ten_up_blackjack(after["dealer_cards"]):
        raise ValueError("the hole card stays face down while the players act")
    return _end_on_dealer_blackjack(after)


def _advance(state: PlayState) -> PlayState:
    """Move to the next phase once nobody is left to act in this one."""
    if state["phase"] == PHASE_INSURANCE and all(b["insurance_decided"] for b in state["boxes"]):
        state["phase"] = PHASE_PLAYERS
    if state["phase"] == PHASE_PLAYERS and next_turn(state) is None:
        state["phase"] = PHASE_DEALER
    # The dealer plays once the hole card is face up.
    if state["phase"] == PHASE_DEALER and not (awaits_hole_card(state) or _dealer_must_draw(state)):
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
    after: PlayState = copied(state, {})  # copy.deepcopy's result, faster (domain/copying.py)
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
    if awaits_hole_card(state):
        raise ValueError("the dealer turns the hole card over before drawing")
    after: PlayState = copied(state, {})
    after["dealer_cards"].append(card)
    assert len(after["dealer_cards"]) <= DEALER_CARDS_MAX
    return _advance(after)


def visible_dealer_cards(state: PlayState) -> list[str]:
    """What players may see: the hole card stays hidden until the dealer plays."""
    return state["dealer_cards"][:1] if hole_card_hidden(state) else list(state["dealer_cards"])
