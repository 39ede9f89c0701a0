"""Blackjack Baden-Baden play: deal, insurance, turns, the dealer, settlement of a round."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.blackjack.play import (
    apply_action,
    cards_needed,
    check_action,
    deal_dealer_card,
    deal_order,
    illegal_reason,
    initial_cards_needed,
    legal_actions,
    next_turn,
    start_play,
    visible_dealer_cards,
)
from domain.blackjack.settlement import settle_round
from domain.blackjack.state import (
    DEALER,
    PHASE_DEALER,
    PHASE_INSURANCE,
    PHASE_OVER,
    PHASE_PLAYERS,
    DealSlot,
    PlayState,
    Turn,
)
from domain.errors import IllegalAction, InvalidBox

STAKE = 100


def shoe_for(boxes: Mapping[int, Sequence[str]], dealer: Sequence[str]) -> list[str]:
    """The initial deal, in shoe order, that gives each box and the dealer these two cards."""
    pending = {number: list(cards) for number, cards in boxes.items()}
    pending[DEALER] = list(dealer)
    return [pending[slot.box_number].pop(0) for slot in deal_order(list(boxes))]


def dealt(
    boxes: Mapping[int, Sequence[str]], dealer: Sequence[str], stake_cents: int = STAKE
) -> PlayState:
    stakes = {number: stake_cents for number in boxes}
    return start_play(stakes, shoe_for(boxes, dealer))


def play(state: PlayState, *steps: tuple[int, int, str, list[str]]) -> PlayState:
    """Each step decided as a round decides it (legal, or refused), then applied."""
    for box_number, hand_index, action, cards in steps:
        check_action(state, box_number, hand_index, action)
        state = apply_action(state, box_number, hand_index, action, cards)
    return state


def nets(state: PlayState) -> list[list[int]]:
    return [[hand["net_cents"] for hand in box["hands"]] for box in settle_round(state)["boxes"]]


# The deal.


def test_the_deal_goes_to_each_box_then_the_up_card_then_each_box_then_the_hole_card() -> None:
    recipients = [slot.box_number for slot in deal_order([5, 3, 1, 2, 4])]
    assert recipients == [1, 2, 3, 4, 5, DEALER, 1, 2, 3, 4, 5, DEALER]
    assert deal_order([4, 2]) == [
        DealSlot(0, 2),
        DealSlot(1, 4),
        DealSlot(2, DEALER),
        DealSlot(3, 2),
        DealSlot(4, 4),
        DealSlot(5, DEALER),
    ]


def test_the_deal_places_shoe_cards_by_the_deal_order() -> None:
    state = start_play({4: 10, 2: 20}, ["2", "3", "4", "5", "6", "7"])
    assert [box["box_number"] for box in state["boxes"]] == [2, 4]
    assert [box["hands"][0]["cards"] for box in state["boxes"]] == [["2", "5"], ["3", "6"]]
    assert state["dealer_cards"] == ["4", "7"]
    assert initial_cards_needed(2) == 6


@pytest.mark.parametrize(
    ("stakes", "card_count", "error"),
    [
        ({1: 100}, 5, ValueError),
        ({1: 0}, 4, ValueError),
        ({}, 2, ValueError),
        ({0: 100}, 4, InvalidBox),
        ({6: 100}, 4, InvalidBox),
        ({number: 100 for number in range(1, 7)}, 14, ValueError),
    ],
)
def test_a_deal_with_bad_boxes_stakes_or_card_count_is_refused(
    stakes: dict[int, int], card_count: int, error: type[Exception]
) -> None:
    with pytest.raises(error):
        start_play(stakes, ["2"] * card_count)


def test_the_hole_card_stays_hidden_until_the_dealer_plays() -> None:
    state = dealt({1: ["10", "8"]}, ["9", "5"])
    assert visible_dealer_cards(state) == ["9"]
    state = play(state, (1, 0, "stand", []))
    assert state["phase"] == PHASE_DEALER
    assert visible_dealer_cards(state) == ["9", "5"]


# Doubling.


@pytest.mark.parametrize(
    ("cards", "reason"),
    [
        (["6", "5"], None),
        (["4", "5"], None),
        (["2", "8"], None),
        (["7", "5"], "a hand can double only on a total of 9, 10 or 11, not 12"),
        (["10", "8"], "a hand can double only on a total of 9, 10 or 11, not 18"),
        (["A", "8"], "a soft 19 cannot double; only a hard 9, 10 or 11 can"),
        (["A", "2"], "a soft 13 cannot double; only a hard 9, 10 or 11 can"),
        (["A", "A"], "a soft 12 cannot double; only a hard 9, 10 or 11 can"),
    ],
)
def test_only_a_hard_9_10_or_11_on_two_cards_can_double(cards: list[str], reason: str) -> None:
    state = dealt({1: cards}, ["9", "8"])
    assert illegal_reason(state, 1, 0, "double") == reason
    assert ("double" in legal_actions(state, 1, 0)) is (reason is None)


def test_a_hand_cannot_double_after_a_hit() -> None:
    state = play(dealt({1: ["2", "3"]}, ["9", "8"]), (1, 0, "hit", ["4"]))
    assert illegal_reason(state, 1, 0, "double") == "a hand can double only on its first two cards"


def test_a_double_doubles_the_stake_and_deals_exactly_one_card() -> None:
    state = play(dealt({1: ["6", "5"], 2: ["10", "7"]}, ["9", "8"]), (1, 0, "double", ["2"]))
    hand = state["boxes"][0]["hands"][0]
    assert hand == {
        "cards": ["6", "5", "2"],
        "stake_cents": 2 * STAKE,
        "doubled": True,
        "split": False,
        "finished": True,
    }
    assert next_turn(state) == Turn(2, 0)


# Splitting.


@pytest.mark.parametrize(
    ("cards", "reason"),
    [
        (["QS", "QH"], None),
        (["8", "8"], None),
        (["A", "AD"], None),
        (["K", "10"], "only two cards of the same rank can split, not K and 10"),
        (["J", "Q"], "only two cards of the same rank can split, not J and Q"),
    ],
)
def test_only_two_cards_of_the_same_rank_can_split(cards: list[str], reason: str) -> None:
    state = dealt({1: cards}, ["9", "8"])
    assert illegal_reason(state, 1, 0, "split") == reason


def test_two_queens_split_into_two_hands_that_cannot_double_or_split_again() -> None:
    state = play(dealt({1: ["QS", "QH"]}, ["9", "8"]), (1, 0, "split", ["QD", "A"]))
    hands = state["boxes"][0]["hands"]
    assert [hand["cards"] for hand in hands] == [["QS", "QD"], ["QH", "A"]]
    assert all(hand["split"] and hand["stake_cents"] == STAKE for hand in hands)
    assert legal_actions(state, 1, 0) == ["hit", "stand"]
    assert illegal_reason(state, 1, 0, "split") == "a box can split only once"
    assert illegal_reason(state, 1, 0, "double") == "a split hand cannot double"


def test_a_split_hand_on_11_still_cannot_double() -> None:
    state = play(dealt({1: ["5", "5"]}, ["9", "8"]), (1, 0, "split", ["6", "4"]))
    assert illegal_reason(state, 1, 0, "double") == "a split hand cannot double"
    assert legal_actions(state, 1, 1) == []
    assert illegal_reason(state, 1, 1, "double") == "it is the turn of box 1, hand 0"


def test_split_aces_reaching_21_are_not_a_blackjack_and_win_1_to_1() -> None:
    state = play(
        dealt({1: ["AS", "AH"]}, ["10", "7"]),
        (1, 0, "split", ["K", "Q"]),
        (1, 0, "stand", []),
        (1, 1, "stand", []),
    )
    assert state["phase"] == PHASE_OVER
    settlement = settle_round(state)
    assert [hand["outcome"] for hand in settlement["boxes"][0]["hands"]] == ["win", "win"]
    assert settlement["total_net_cents"] == 2 * STAKE


# Insurance and even money.


def test_insurance_is_decided_for_every_box_before_anyone_plays() -> None:
    state = dealt({1: ["10", "6"], 2: ["A", "K"], 3: ["9", "9"]}, ["A", "7"])
    assert state["phase"] == PHASE_INSURANCE
    assert legal_actions(state, 1, 0) == ["insurance", "no_insurance"]
    assert illegal_reason(state, 1, 0, "hit") == (
        "insurance comes first: answer insurance, no_insurance or even_money"
    )
    assert illegal_reason(state, 2, 0, "no_insurance") == "it is the turn of box 1, hand 0"
    state = play(state, (1, 0, "insurance", []))
    assert next_turn(state) == Turn(2, 0)
    assert legal_actions(state, 2, 0) == ["no_insurance", "even_money"]
    state = play(state, (2, 0, "no_insurance", []), (3, 0, "no_insurance", []))
    assert state["phase"] == PHASE_PLAYERS
    assert next_turn(state) == Turn(1, 0)
    assert illegal_reason(state, 1, 0, "insurance") == (
        "insurance is offered only right after the deal, when the dealer shows an ace"
    )


@pytest.mark.parametrize(
    ("cards", "action", "reason"),
    [
        (["10", "6"], "even_money", "even money is offered only to a box holding a blackjack"),
        (["A", "K"], "insurance", "a box holding a blackjack is offered even money, not insurance"),
    ],
)
def test_even_money_is_only_for_a_blackjack_and_insurance_only_for_the_rest(
    cards: list[str], action: str, reason: str
) -> None:
    state = dealt({1: cards}, ["A", "7"])
    assert illegal_reason(state, 1, 0, action) == reason


def test_insurance_is_not_offered_when_no_ace_is_up() -> None:
    state = dealt({1: ["10", "6"]}, ["9", "7"])
    assert state["phase"] == PHASE_PLAYERS
    assert legal_actions(state, 1, 0) == ["hit", "stand"]


# (dealer cards, insurance action, insurance cents, insurance net, hand outcome, box net)
INSURANCE_CASES = [
    (["A", "K"], "insurance", 50, 100, "lose", 0),
    (["A", "7"], "insurance", 50, -50, "win", 50),
    (["A", "8"], "no_insurance", 0, 0, "push", 0),
]


@pytest.mark.parametrize(
    ("dealer", "action", "insurance_cents", "insurance_net", "outcome", "box_net"),
    INSURANCE_CASES,
)
def test_insurance_pays_2_to_1_when_the_dealer_has_blackjack_and_is_lost_otherwise(
    dealer: list[str],
    action: str,
    insurance_cents: int,
    insurance_net: int,
    outcome: str,
    box_net: int,
) -> None:
    state = play(dealt({1: ["10", "9"]}, dealer), (1, 0, action, []), (1, 0, "stand", []))
    assert state["boxes"][0]["insurance_cents"] == insurance_cents
    box = settle_round(state)["boxes"][0]
    assert box["insurance_net_cents"] == insurance_net
    assert box["hands"][0]["outcome"] == outcome
    assert box["net_cents"] == box_net


def test_insurance_on_an_odd_stake_costs_half_rounded_down() -> None:
    state = play(dealt({1: ["10", "9"]}, ["A", "7"], stake_cents=15), (1, 0, "insurance", []))
    assert state["boxes"][0]["insurance_cents"] == 7


def test_a_one_cent_stake_cannot_be_insured() -> None:
    state = dealt({1: ["10", "9"]}, ["A", "7"], stake_cents=1)
    assert legal_actions(state, 1, 0) == ["no_insurance"]


@pytest.mark.parametrize(
    ("dealer", "action", "outcome", "net"),
    [
        (["A", "Q"], "even_money", "even_money", STAKE),
        (["A", "Q"], "no_insurance", "push", 0),
        (["A", "7"], "even_money", "even_money", STAKE),
        (["A", "7"], "no_insurance", "blackjack", STAKE * 3 // 2),
    ],
)
def test_even_money_pays_1_to_1_at_once_and_a_declined_one_pushes_on_a_dealer_blackjack(
    dealer: list[str], action: str, outcome: str, net: int
) -> None:
    state = play(dealt({1: ["A", "K"]}, dealer), (1, 0, action, []))
    assert state["phase"] == PHASE_OVER
    hand = settle_round(state)["boxes"][0]["hands"][0]
    assert (hand["outcome"], hand["net_cents"]) == (outcome, net)


# The dealer's blackjack.


def test_a_ten_up_dealer_blackjack_ends_the_round_at_once() -> None:
    state = dealt({1: ["10", "9"], 2: ["A", "K"], 3: ["6", "5"]}, ["K", "A"])
    assert state["phase"] == PHASE_OVER
    assert next_turn(state) is None
    assert illegal_reason(state, 3, 0, "double") == "the round is over"
    assert visible_dealer_cards(state) == ["K", "A"]
    assert nets(state) == [[-STAKE], [0], [-STAKE]]


def test_a_doubled_hand_loses_both_stakes_to_a_dealer_blackjack_with_an_ace_up() -> None:
    state = dealt({1: ["6", "5"]}, ["A", "K"])
    assert state["phase"] == PHASE_INSURANCE
    state = play(state, (1, 0, "no_insurance", []), (1, 0, "double", ["9"]))
    assert state["phase"] == PHASE_OVER
    assert nets(state) == [[-2 * STAKE]]


def test_split_hands_both_lose_to_a_dealer_blackjack_with_an_ace_up() -> None:
    state = play(
        dealt({1: ["8", "8"]}, ["A", "K"]),
        (1, 0, "no_insurance", []),
        (1, 0, "split", ["3", "A"]),
        (1, 0, "stand", []),
        (1, 1, "stand", []),
    )
    assert nets(state) == [[-STAKE, -STAKE]]


# Six-card Charlie.


def test_six_cards_under_22_win_at_once_even_against_a_later_dealer_21() -> None:
    state = play(
        dealt({1: ["2", "2"]}, ["10", "6"]),
        (1, 0, "hit", ["3"]),
        (1, 0, "hit", ["3"]),
        (1, 0, "hit", ["4"]),
        (1, 0, "hit", ["A"]),
    )
    assert state["boxes"][0]["hands"][0]["finished"]
    assert state["phase"] == PHASE_OVER, "nothing left for the dealer to decide"
    state = dealt({1: ["2", "2"], 2: ["10", "8"]}, ["10", "6"])
    hits = [(1, 0, "hit", [card]) for card in ["3", "3", "4", "A"]]
    state = play(state, *hits, (2, 0, "stand", []))
    state = deal_dealer_card(state, "5")
    assert state["dealer_cards"] == ["10", "6", "5"]
    settlement = settle_round(state)
    assert [box["hands"][0]["outcome"] for box in settlement["boxes"]] == ["charlie", "lose"]
    assert settlement["total_net_cents"] == 0


def test_six_cards_still_lose_to_a_dealer_blackjack_with_an_ace_up() -> None:
    state = play(dealt({1: ["2", "2"]}, ["A", "K"]), (1, 0, "no_insurance", []))
    state = play(state, *[(1, 0, "hit", [card]) for card in ["3", "3", "4", "A"]])
    assert nets(state) == [[-STAKE]]


# The dealer's play.


def test_the_dealer_draws_on_16_and_stops_at_17() -> None:
    state = play(dealt({1: ["10", "8"]}, ["10", "6"]), (1, 0, "stand", []))
    assert state["phase"] == PHASE_DEALER
    state = deal_dealer_card(state, "A")
    assert state["phase"] == PHASE_OVER
    assert nets(state) == [[STAKE]]


def test_the_dealer_stands_on_soft_17() -> None:
    state = play(
        dealt({1: ["10", "7"]}, ["A", "6"]), (1, 0, "no_insurance", []), (1, 0, "stand", [])
    )
    assert state["phase"] == PHASE_OVER
    assert nets(state) == [[0]]


def test_the_dealer_does_not_draw_when_every_hand_is_already_decided() -> None:
    state = play(dealt({1: ["10", "6"]}, ["10", "5"]), (1, 0, "hit", ["K"]))
    assert state["phase"] == PHASE_OVER
    assert nets(state) == [[-STAKE]]


def test_the_dealer_draws_only_in_the_dealer_phase() -> None:
    with pytest.raises(ValueError, match="dealer phase"):
        deal_dealer_card(dealt({1: ["10", "6"]}, ["10", "5"]), "5")


# Turn order and refusals.


def test_five_boxes_play_in_order_hand_0_before_hand_1() -> None:
    boxes = {1: ["10", "7"], 2: ["8", "8"], 3: ["10", "8"], 4: ["6", "5"], 5: ["10", "9"]}
    state = dealt(boxes, ["9", "8"])
    assert illegal_reason(state, 3, 0, "stand") == "it is the turn of box 1, hand 0"
    steps = [
        (1, 0, "stand", []),
        (2, 0, "split", ["2", "3"]),
        (2, 0, "stand", []),
        (2, 1, "hit", ["10"]),
        (2, 1, "stand", []),
        (3, 0, "stand", []),
        (4, 0, "double", ["10"]),
        (5, 0, "stand", []),
    ]
    turns = []
    for step in steps:
        turns.append(next_turn(state))
        state = play(state, step)
    assert turns == [Turn(box, hand) for box, hand, _, _ in steps]
    assert state["phase"] == PHASE_OVER
    assert nets(state) == [[0], [-STAKE, STAKE], [STAKE], [2 * STAKE], [STAKE]]


@pytest.mark.parametrize(
    ("box_number", "hand_index", "action", "reason"),
    [
        (1, 0, "fold", "'fold' is not a blackjack action; choose one of hit, stand, double, "),
        (4, 0, "hit", "box 4 has no bet in this round"),
        (1, 1, "hit", "box 1 has no hand 1"),
    ],
)
def test_an_unknown_action_box_or_hand_is_refused_with_a_reason(
    box_number: int, hand_index: int, action: str, reason: str
) -> None:
    state = dealt({1: ["10", "6"]}, ["9", "7"])
    assert (illegal_reason(state, box_number, hand_index, action) or "").startswith(reason)
    with pytest.raises(IllegalAction, match="^" + reason[:10]):
        check_action(state, box_number, hand_index, action)


def test_an_action_with_the_wrong_number_of_cards_is_a_bug() -> None:
    assert [cards_needed(a) for a in ["hit", "double", "split", "stand", "insurance"]] == [
        1,
        1,
        2,
        0,
        0,
    ]
    with pytest.raises(ValueError, match="hit takes 1 cards, not 0"):
        apply_action(dealt({1: ["10", "6"]}, ["9", "7"]), 1, 0, "hit")


def test_a_step_leaves_the_state_it_was_given_untouched() -> None:
    state = dealt({1: ["8", "8"]}, ["9", "7"])
    before = copy.deepcopy(state)
    play(state, (1, 0, "split", ["2", "3"]))
    assert state == before


def test_play_state_and_settlement_are_plain_json() -> None:
    state = play(
        dealt({1: ["8", "8"], 3: ["A", "K"]}, ["A", "7"]),
        (1, 0, "insurance", []),
        (3, 0, "even_money", []),
        (1, 0, "split", ["2", "3"]),
        (1, 0, "stand", []),
        (1, 1, "stand", []),
    )
    assert json.loads(json.dumps(state)) == state
    assert json.loads(json.dumps(settle_round(state))) == settle_round(state)


def test_an_unfinished_round_does_not_settle() -> None:
    with pytest.raises(ValueError, match="only a finished round settles"):
        settle_round(dealt({1: ["10", "6"]}, ["9", "7"]))


# Property: random shoes, random legal play.

TWO_DECKS = [
    rank + suit
    for rank in ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    for suit in "SHDC"
] * 2

# One recorded step: (box, hand, action, cards) for a player, (DEALER, 0, "draw", [card]).
Step = tuple[int, int, str, list[str]]


def play_at_random(
    stakes: dict[int, int], shoe: list[str], data: st.DataObject
) -> tuple[PlayState, list[Step]]:
    position = initial_cards_needed(len(stakes))
    state = start_play(stakes, shoe[:position])
    steps: list[Step] = []
    while state["phase"] != PHASE_OVER:
        turn = next_turn(state)
        if turn is None:
            steps.append((DEALER, 0, "draw", [shoe[position]]))
            state = deal_dealer_card(state, shoe[position])
            position += 1
            continue
        actions = legal_actions(state, turn.box_number, turn.hand_index)
        assert actions, "whoever is to act always has a legal action"
        action = data.draw(st.sampled_from(actions))
        cards = shoe[position : position + cards_needed(action)]
        position += len(cards)
        steps.append((turn.box_number, turn.hand_index, action, cards))
        state = apply_action(state, turn.box_number, turn.hand_index, action, cards)
    return state, steps


def replay(stakes: dict[int, int], shoe: list[str], steps: list[Step]) -> PlayState:
    state = start_play(stakes, shoe[: initial_cards_needed(len(stakes))])
    for box_number, hand_index, action, cards in steps:
        if box_number == DEALER:
            state = deal_dealer_card(state, cards[0])
        else:
            state = apply_action(state, box_number, hand_index, action, cards)
    return state


@settings(max_examples=400, deadline=None)
@given(
    stakes=st.dictionaries(st.integers(1, 5), st.integers(1, 100_000), min_size=1, max_size=5),
    shoe=st.permutations(TWO_DECKS),
    data=st.data(),
)
def test_a_hand_nets_between_minus_its_stake_and_one_and_a_half_times_it_and_settles_alike(
    stakes: dict[int, int], shoe: list[str], data: st.DataObject
) -> None:
    state, steps = play_at_random(stakes, shoe, data)
    settlement = settle_round(state)
    for box in settlement["boxes"]:
        stake = stakes[box["box_number"]]
        for hand in box["hands"]:
            # Only a double raises a hand's stake, to twice the box's bet; a winning
            # double nets +2x the bet, so the bound on the bet is [-2x, +2x].
            assert hand["stake_cents"] in (stake, 2 * stake)
            assert -hand["stake_cents"] <= hand["net_cents"]
            assert 2 * hand["net_cents"] <= 3 * hand["stake_cents"]
            assert -2 * stake <= hand["net_cents"] <= 2 * stake
        assert -stake <= 2 * box["insurance_net_cents"] <= 2 * stake
    assert settlement["total_net_cents"] == sum(box["net_cents"] for box in settlement["boxes"])
    assert settle_round(replay(stakes, shoe, steps)) == settlement
    assert settle_round(copy.deepcopy(state)) == settlement
