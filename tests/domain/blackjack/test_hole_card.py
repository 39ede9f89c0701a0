"""The hole card lies face down, in the store too (rules.md 3, 5(c)): the deal records
only its place in the shoe, and the round turns it over in the save that ends it."""

from typing import Any

import pytest
from hypothesis import given as cases
from hypothesis import settings
from hypothesis import strategies as st

from domain.blackjack.audit import play_again
from domain.blackjack.hole_card import awaits_hole_card, dealer_checks_blackjack, hole_card_hidden
from domain.blackjack.play import (
    apply_action,
    deal_dealer_card,
    legal_actions,
    start_play,
    turn_hole_card,
    visible_dealer_cards,
)
from domain.blackjack.round import IN_PLAY, SETTLED_STATUS, BlackjackRound
from domain.blackjack.settlement import RULESETS, settle_round
from domain.blackjack.state import PHASE_DEALER, PHASE_INSURANCE, PHASE_OVER, PHASE_PLAYERS
from domain.unit import MemoryBox
from tests.domain.blackjack.test_round import (
    HALLS,
    SEED,
    events_of,
    given,
    ranks,
    replayed,
    shoe_for,
    topics,
)

# The rules: a state that does not hold the hole card.


def test_a_deal_without_its_hole_card_plays_on_with_it_face_down() -> None:
    state = start_play({1: 100}, ["10H", "6S", "8D"])  # box 1: 10, 8; the dealer: 6 up
    assert (state["phase"], state["dealer_cards"]) == (PHASE_PLAYERS, ["6S"])
    assert awaits_hole_card(state) and hole_card_hidden(state)
    with pytest.raises(ValueError, match="face down while the players act"):
        turn_hole_card(state, "QD")
    state = apply_action(state, 1, 0, "stand")
    assert (state["phase"], visible_dealer_cards(state)) == (PHASE_DEALER, ["6S"])
    with pytest.raises(ValueError, match="turns the hole card over before drawing"):
        deal_dealer_card(state, "KC")
    state = turn_hole_card(state, "QD")  # 16: the dealer draws
    assert (state["phase"], visible_dealer_cards(state)) == (PHASE_DEALER, ["6S", "QD"])
    assert not hole_card_hidden(state)
    assert deal_dealer_card(state, "KC")["phase"] == PHASE_OVER


def test_a_ten_up_is_checked_by_the_round_when_the_hole_card_is_face_down() -> None:
    state = start_play({1: 100}, ["9H", "KS", "9D"])
    assert state["phase"] == PHASE_PLAYERS  # no check without the card: the round makes it
    assert dealer_checks_blackjack(state, "AH")
    assert not dealer_checks_blackjack(state, "9C")
    assert not dealer_checks_blackjack(start_play({1: 100}, ["9H", "AS", "9D"]), "KH")  # ace up
    over = turn_hole_card(state, "AH")
    assert over["phase"] == PHASE_OVER
    assert over["boxes"][0]["hands"][0]["finished"]


def test_a_deal_with_its_hole_card_is_checked_at_once_as_before() -> None:
    state = start_play({1: 100}, ["9H", "KS", "9D", "AH"])
    assert state["phase"] == PHASE_OVER
    assert not awaits_hole_card(state)


# The round.


def opened_with(box: MemoryBox, shoe: list[str] | None = None, seed: str = SEED) -> BlackjackRound:
    """A round opened with a box the test keeps, to open its seed again after a replay."""
    return BlackjackRound.open(
        mode="real", player_id="alice", hall=HALLS["2"], decks=2, box=box, seed=seed,
        shoe_prefix=shoe,
    )  # fmt: skip


def of_type(round_: BlackjackRound, name: str) -> list[Any]:
    return [event for event in events_of(round_) if type(event).__name__ == name]


def public(round_: BlackjackRound) -> tuple[Any, ...]:
    """What a player may see of a round in play."""
    return (round_.status, round_.state["phase"], round_.state["boxes"], round_.next_turn())


def test_no_event_of_a_round_in_play_holds_the_hole_card() -> None:
    round_ = given({1: ["9", "7"]}, dealer=["6", "QD"])
    assert round_.status == IN_PLAY
    assert not [event for event in events_of(round_) if "QD" in repr(vars(event))]
    [hole] = of_type(round_, "HoleCardDealt")
    assert (hole.hole_card, hole.position) == (None, 3)
    assert round_.state["dealer_cards"] == ["6" + round_.shoe()[2][-1]]  # only the up card


def test_the_hole_card_is_turned_over_once_the_players_are_done_then_the_dealer_draws() -> None:
    round_ = given({1: ["9", "7"]}, dealer=["6", "QD"], then=["K"])
    round_.act(round_.decide(1, 0, "stand"))
    names = topics(round_)
    assert names[names.index("PlayerActed") :] == [
        "PlayerActed", "HoleCardRevealed", "DealerDrew", "PayoutMade", "Settled"
    ]  # fmt: skip
    [turned] = of_type(round_, "HoleCardRevealed")
    assert (turned.hole_card, turned.position) == ("QD", 3)
    assert ranks(round_.state["dealer_cards"]) == ["6", "Q", "K"]  # 16 draws and busts
    assert round_.player_net_cents == 1000


def test_a_blackjack_under_a_ten_is_turned_over_at_the_deal_and_ends_the_round() -> None:
    round_ = given({1: ["10", "9"]}, dealer=["KS", "AH"])
    names = topics(round_)
    assert names[names.index("HoleCardDealt") :] == [
        "HoleCardDealt", "HoleCardRevealed", "PayoutMade", "Settled"
    ]  # fmt: skip
    assert (round_.status, round_.player_net_cents) == (SETTLED_STATUS, -1000)


def test_every_box_busting_still_turns_the_hole_card_over_for_the_settlement() -> None:
    round_ = given({1: ["10", "6"]}, dealer=["9", "7"], then=["K"])
    round_.act(round_.decide(1, 0, "hit"))  # 26
    assert topics(round_)[-3:] == ["HoleCardRevealed", "PayoutMade", "Settled"]
    assert ranks(round_.state["dealer_cards"]) == ["9", "7"]  # nothing to draw for


def test_a_round_in_play_replays_without_its_key_and_plays_on_once_unsealed() -> None:
    # Given a round in play, dealt from a box this test keeps,
    box = MemoryBox()
    shoe = shoe_for({1: ["9", "7"], 2: ["10", "8"]}, dealer=["6", "10"], then=["5", "K"])
    round_ = opened_with(box, shoe)
    for number in (1, 2):
        round_.place_bet(number, 1000)
    round_.deal()
    round_.act(round_.decide(1, 0, "hit"))  # 21
    round_.act(round_.decide(1, 0, "stand"))
    # when it is rebuilt from its events alone, as a query reads it (no key, no seed),
    copy = replayed(round_)
    assert copy.seed is None
    assert public(copy) == public(round_)
    assert copy.state["phase"] == PHASE_PLAYERS
    # then, once a command opens its seed, it plays on to the same end.
    copy.unseal(box)
    for played in (round_, copy):
        played.act(played.decide(2, 0, "stand"))
    assert copy.payouts == round_.payouts
    assert ranks(copy.state["dealer_cards"]) == ["6", "10", "K"]


def test_a_round_dealt_with_the_hole_card_in_clear_still_replays_and_plays_on() -> None:
    # Given a round dealt as the code before rules.md 5(c) dealt it: the hole card in clear,
    box = MemoryBox()
    shoe = shoe_for({1: ["9", "7"]}, dealer=["6", "QD"], then=["K"])
    round_ = opened_with(box, shoe)
    round_.place_bet(1, 1000)
    cards = round_.shoe()[:4]
    for position, (box_number, card) in enumerate(zip([1, None, 1], cards, strict=False)):
        round_._card_dealt(box_number, card, position)
    round_._hole_card_dealt(cards[3], 3)
    # when it is replayed and played on,
    copy = replayed(round_)
    copy.unseal(box)
    assert copy.state["dealer_cards"] == cards[1:4:2]  # held from the deal, hidden all the same
    copy.act(copy.decide(1, 0, "stand"))
    # then the dealer draws with no card turned over, and the round settles as it did then.
    assert "HoleCardRevealed" not in topics(copy)
    assert (copy.status, copy.player_net_cents) == (SETTLED_STATUS, 1000)


@settings(max_examples=150, deadline=None)
@cases(
    seed=st.binary(min_size=32, max_size=32),
    boxes=st.integers(min_value=1, max_value=3),
    choices=st.lists(st.integers(min_value=0, max_value=6), max_size=12),
)
def test_a_round_played_face_down_ends_as_its_shoe_played_face_up_gives(
    seed: bytes, boxes: int, choices: list[int]
) -> None:
    # Given a round on a shuffled shoe, dealt, and played with any legal decisions,
    round_ = opened_with(MemoryBox(), seed=seed.hex())
    for number in range(1, boxes + 1):
        round_.place_bet(number, 1000)
    round_.deal()
    pending = list(choices)
    while (turn := round_.next_turn()) is not None:
        actions = legal_actions(round_.state, turn.box_number, turn.hand_index)
        if pending:
            action = actions[pending.pop(0) % len(actions)]
        else:
            action = "no_insurance" if round_.state["phase"] == PHASE_INSURANCE else "stand"
        round_.act(round_.decide(turn.box_number, turn.hand_index, action))
    # then it ends as the audit plays it again, the hole card known from the deal on,
    assert round_.status == SETTLED_STATUS
    again = play_again(round_, events_of(round_))
    assert again["dealer_cards"] == round_.state["dealer_cards"]
    due = settle_round(again, RULESETS[round_.ruleset])
    assert [box["net_cents"] for box in due["boxes"]] == [p["net_cents"] for p in round_.payouts]
    # with the card turned over once, where it was dealt, and in no event before the end.
    [turned] = of_type(round_, "HoleCardRevealed")
    assert turned.hole_card == round_.shoe()[turned.position] == again["dealer_cards"][1]
    names = topics(round_)
    assert names.index("HoleCardRevealed") > names.index("HoleCardDealt")
    assert [e.hole_card for e in of_type(round_, "HoleCardDealt")] == [None]
