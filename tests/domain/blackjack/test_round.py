"""The blackjack round aggregate, given / when / then, without a store."""

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from domain.blackjack.hands import parse_box
from domain.blackjack.play import deal_order
from domain.blackjack.round import (
    BY_SYSTEM,
    IN_PLAY,
    SETTLED_STATUS,
    BlackjackRound,
)
from domain.blackjack.settlement import settle_round
from domain.blackjack.state import DEALER, PHASE_INSURANCE
from domain.errors import (
    AboveTableMaximum,
    BelowTableMinimum,
    IllegalAction,
    InvalidBox,
    InvalidShoe,
    NoBets,
    NoStakeOnBox,
    RoundNotOpen,
)
from domain.settings import BlackjackSettings
from domain.shoe import certification_shoe
from domain.unit import MemoryBox

SEED = "00" * 32
HALLS = BlackjackSettings().halls


def shoe_for(
    boxes: Mapping[int, Sequence[str]], dealer: Sequence[str], then: Sequence[str] = ()
) -> list[str]:
    """A shoe prefix that deals each box and the dealer these two cards, then `then`."""
    pending = {number: list(cards) for number, cards in boxes.items()}
    pending[DEALER] = list(dealer)
    return [pending[slot.box_number].pop(0) for slot in deal_order(list(boxes))] + list(then)


def given(
    boxes: Mapping[int, Sequence[str]],
    dealer: Sequence[str],
    then: Sequence[str] = (),
    stake_cents: int = 1000,
    hall: str = "2",
) -> BlackjackRound:
    """A round dealt from a certification shoe, a bet of `stake_cents` on every box."""
    round_ = BlackjackRound.open(
        mode="real",
        player_id="alice",
        hall=HALLS[hall],
        decks=2,
        box=MemoryBox(),
        seed=SEED,
        shoe_prefix=shoe_for(boxes, dealer, then),
    )
    for box in boxes:
        round_.place_bet(box, stake_cents)
    round_.deal()
    return round_


def opened(hall: str = "2") -> BlackjackRound:
    return BlackjackRound.open(
        mode="real", player_id="alice", hall=HALLS[hall], decks=2, box=MemoryBox(), seed=SEED
    )


def events_of(round_: BlackjackRound) -> list[Any]:
    return list(round_.pending_events)


def topics(round_: BlackjackRound) -> list[str]:
    return [type(event).__name__ for event in events_of(round_)]


def replayed(round_: BlackjackRound) -> BlackjackRound:
    """The round rebuilt from its own events, as the store would."""
    copy: Any = None
    for event in events_of(round_):
        copy = event.mutate(copy)
    assert isinstance(copy, BlackjackRound)
    return copy


def ranks(cards: Sequence[str]) -> list[str]:
    return [card[:-1] for card in cards]


# Bets.


def test_a_box_takes_stakes_within_the_hall_limits_per_box() -> None:
    round_ = opened(hall="1")
    round_.place_bet(1, 10)
    round_.place_bet(1, 990)  # exactly the $10 maximum on one box
    round_.place_bet(5, 1000)  # and again on another box
    assert round_.bets == {1: 1000, 5: 1000}
    with pytest.raises(AboveTableMaximum):
        round_.place_bet(1, 1)
    with pytest.raises(BelowTableMinimum):
        round_.place_bet(2, 9)
    assert round_.bets == {1: 1000, 5: 1000}


@pytest.mark.parametrize("box", [0, 6, -1])
def test_there_are_five_boxes(box: int) -> None:
    with pytest.raises(InvalidBox):
        opened().place_bet(box, 100)


@pytest.mark.parametrize("text", ["0", "6", "01", "²", "player", "1" * 5000])
def test_a_box_named_in_a_path_is_one_to_five(text: str) -> None:
    with pytest.raises(InvalidBox):
        parse_box(text)
    assert parse_box("5") == 5


def test_removing_a_bet_gives_back_the_whole_box() -> None:
    round_ = opened()
    round_.place_bet(2, 500)
    round_.place_bet(2, 300)
    assert round_.remove_bet(2) == 800
    assert round_.bets == {}
    with pytest.raises(NoStakeOnBox):
        round_.remove_bet(2)


def test_a_round_without_bets_cannot_be_dealt() -> None:
    with pytest.raises(NoBets):
        opened().deal()


def test_a_shoe_the_decks_cannot_hold_is_refused() -> None:
    round_ = BlackjackRound.open(
        mode="real",
        player_id="alice",
        hall=HALLS["1"],
        decks=2,
        box=MemoryBox(),
        seed=SEED,
        shoe_prefix=["AS"] * 3,
    )
    with pytest.raises(InvalidShoe):
        round_.check_shoe()


# The deal.


def test_the_deal_records_each_card_in_deal_order_and_the_hole_card_apart() -> None:
    round_ = given({1: ["9", "7"], 3: ["5", "5"]}, dealer=["6", "10"])
    dealt = [e for e in events_of(round_) if type(e).__name__ == "CardDealt"]
    assert [(e.box, e.position) for e in dealt] == [(1, 0), (3, 1), (None, 2), (1, 3), (3, 4)]
    hole = events_of(round_)[-1]
    assert type(hole).__name__ == "HoleCardDealt"
    assert (hole.hole_card, hole.position) == (None, 5)  # face down: only its place
    assert round_.status == IN_PLAY
    assert round_.shoe()[: round_.shoe_position - 1] == [e.card for e in dealt]


def test_no_bet_changes_once_the_cards_are_dealt() -> None:
    round_ = given({1: ["9", "7"]}, dealer=["6", "10"])
    with pytest.raises(RoundNotOpen):
        round_.place_bet(2, 100)
    with pytest.raises(RoundNotOpen):
        round_.remove_bet(1)
    with pytest.raises(RoundNotOpen):
        round_.deal()


def test_a_dealer_blackjack_under_a_ten_ends_the_round_at_the_deal() -> None:
    round_ = given({1: ["A", "K"], 2: ["10", "9"]}, dealer=["K", "A"])
    assert round_.status == SETTLED_STATUS
    assert topics(round_)[-3:] == ["PayoutMade", "PayoutMade", "Settled"]
    assert [p["net_cents"] for p in round_.payouts] == [0, -1000]  # blackjack pushes
    assert round_.player_net_cents == -1000


def test_an_ace_up_offers_insurance_without_a_check() -> None:
    round_ = given({1: ["10", "9"]}, dealer=["A", "K"])
    assert round_.status == IN_PLAY
    assert round_.state["phase"] == PHASE_INSURANCE


# Decisions.


def test_an_illegal_action_is_refused_with_the_reason_and_changes_nothing() -> None:
    round_ = given({1: ["A", "8"], 2: ["K", "10"]}, dealer=["6", "10"])
    version = round_.version
    with pytest.raises(IllegalAction, match="a soft 19 cannot double"):
        round_.act(round_.decide(1, 0, "double"))
    with pytest.raises(IllegalAction, match="it is the turn of box 1, hand 0"):
        round_.act(round_.decide(2, 0, "stand"))
    with pytest.raises(IllegalAction, match="has no bet"):
        round_.act(round_.decide(4, 0, "stand"))
    assert round_.version == version


def test_acting_before_the_deal_is_illegal() -> None:
    round_ = opened()
    round_.place_bet(1, 500)
    with pytest.raises(IllegalAction, match="not been dealt"):
        round_.act(round_.decide(1, 0, "hit"))


def test_a_double_a_split_and_insurance_each_add_to_the_stake() -> None:
    double = given({1: ["6", "5"]}, dealer=["7", "10"], stake_cents=1500)
    assert double.decide(1, 0, "double").added_stake_cents == 1500
    split = given({1: ["8", "8"]}, dealer=["7", "10"], stake_cents=1500)
    assert split.decide(1, 0, "split").added_stake_cents == 1500
    insured = given({1: ["10", "9"]}, dealer=["A", "7"], stake_cents=1500)
    assert insured.decide(1, 0, "insurance").added_stake_cents == 750
    assert insured.decide(1, 0, "no_insurance").added_stake_cents == 0


def test_each_decision_takes_its_cards_from_the_shoe_in_order() -> None:
    round_ = given({1: ["8", "8"]}, dealer=["7", "10"], then=["3", "K", "2", "9"])
    round_.act(round_.decide(1, 0, "split"))
    round_.act(round_.decide(1, 0, "hit"))
    round_.act(round_.decide(1, 0, "stand"))
    hands = round_.state["boxes"][0]["hands"]
    assert [ranks(hand["cards"]) for hand in hands] == [["8", "3", "2"], ["8", "K"]]
    assert round_.added_stake_cents == 1000
    assert round_.held_cents == 2000


def test_the_dealer_draws_to_17_and_the_round_settles_after_the_last_decision() -> None:
    round_ = given({1: ["10", "8"]}, dealer=["6", "5"], then=["A", "5", "K"])
    round_.act(round_.decide(1, 0, "stand", by=BY_SYSTEM))
    assert ranks(round_.state["dealer_cards"]) == ["6", "5", "A", "5"]  # 12, then 17: stands
    assert round_.status == SETTLED_STATUS
    assert topics(round_)[-2:] == ["PayoutMade", "Settled"]
    acted = next(e for e in events_of(round_) if type(e).__name__ == "PlayerActed")
    assert acted.by == "system"


def test_the_dealer_stands_on_soft_17() -> None:
    round_ = given({1: ["10", "8"]}, dealer=["6", "A"])
    round_.act(round_.decide(1, 0, "stand"))
    assert ranks(round_.state["dealer_cards"]) == ["6", "A"]
    assert round_.payouts[0]["hands"][0]["outcome"] == "win"


def test_replaying_the_events_rebuilds_the_round_and_its_payouts() -> None:
    round_ = given({1: ["8", "8"], 2: ["6", "5"]}, dealer=["9", "7"], then=["3", "K", "9"])
    for box, hand, action in [(1, 0, "split"), (1, 0, "stand"), (1, 1, "stand"), (2, 0, "double")]:
        round_.act(round_.decide(box, hand, action))
    copy = replayed(round_)
    assert copy.status == SETTLED_STATUS
    assert copy.state == round_.state
    assert copy.payouts == round_.payouts
    resettled = settle_round(copy.state)
    assert [box["net_cents"] for box in resettled["boxes"]] == [
        p["net_cents"] for p in round_.payouts
    ]


def test_the_seed_and_the_shoe_are_those_committed_to() -> None:
    round_ = given({1: ["10", "7"]}, dealer=["9", "8"])
    prefix = shoe_for({1: ["10", "7"]}, ["9", "8"])
    assert round_.shoe() == certification_shoe(prefix, SEED, 2)
