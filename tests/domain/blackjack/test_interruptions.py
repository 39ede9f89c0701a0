"""Interrupted blackjack rounds (rules.md 4), given / when / then: the round aggregate
without a store."""

import pytest

from domain.blackjack.interruptions import finish_with_house_defaults
from domain.blackjack.round import (
    BY_PLAYER,
    BY_SYSTEM,
    IN_PLAY,
    INTERRUPTED_STATUS,
    SETTLED_STATUS,
)
from domain.errors import RoundInterrupted
from domain.player import Player
from tests.domain.blackjack.test_round import events_of, given, ranks, replayed, topics

# The round aggregate.


def test_an_interrupted_round_refuses_the_players_decisions_and_bets() -> None:
    round_ = given({1: ["10", "2"]}, dealer=["6", "10"])
    round_.interrupt("player alice disconnected")
    assert (round_.status, round_.interrupted_at) == (INTERRUPTED_STATUS, round_.modified_on)
    before = len(events_of(round_))
    for attempt in (
        lambda: round_.act(round_.decide(1, 0, "hit")),
        lambda: round_.decide(1, 0, "double"),
        lambda: round_.place_bet(2, 100),
        lambda: round_.remove_bet(1),
        lambda: round_.deal(),
    ):
        with pytest.raises(RoundInterrupted, match="player alice disconnected"):
            attempt()
    assert len(events_of(round_)) == before
    assert topics(round_)[-1] == "Interrupted"


def test_a_resumed_round_plays_on_from_where_it_stopped() -> None:
    round_ = given({1: ["10", "2"]}, dealer=["6", "10"], then=["5", "K"])
    round_.interrupt("player alice disconnected")
    round_.resume()
    assert (round_.status, round_.interrupted_at) == (IN_PLAY, None)
    round_.act(round_.decide(1, 0, "hit"))  # 17
    round_.act(round_.decide(1, 0, "stand"))
    assert round_.status == SETTLED_STATUS
    assert round_.player_net_cents == 1000  # the dealer's 16 draws a K and busts
    assert topics(round_)[6:9] == ["Interrupted", "Resumed", "PlayerActed"]


def test_the_house_defaults_decline_insurance_and_stand_on_every_open_hand() -> None:
    # Box 1: 10, 6 (16); box 2: 9, 9 (18); the dealer A up, 2 in the hole, then draws a 4.
    round_ = given({1: ["10", "6"], 2: ["9", "9"]}, dealer=["A", "2"], then=["4"])
    round_.act(round_.decide(1, 0, "no_insurance"))  # the player answered for box 1 before going
    round_.interrupt("player alice disconnected")
    finish_with_house_defaults(round_)
    decisions = [e for e in events_of(round_) if type(e).__name__ == "PlayerActed"]
    assert [(e.box, e.hand, e.action, e.by) for e in decisions] == [
        (1, 0, "no_insurance", BY_PLAYER),
        (2, 0, "no_insurance", BY_SYSTEM),
        (1, 0, "stand", BY_SYSTEM),
        (2, 0, "stand", BY_SYSTEM),
    ]
    assert ranks(round_.state["dealer_cards"]) == ["A", "2", "4"]  # soft 17 stands
    assert round_.status == SETTLED_STATUS
    assert [p["net_cents"] for p in round_.payouts] == [-1000, 1000]
    assert round_.added_stake_cents == 0  # the defaults hold nothing more
    assert replayed(round_).payouts == round_.payouts


def test_the_house_defaults_stand_on_both_hands_of_a_split() -> None:
    round_ = given({1: ["8", "8"]}, dealer=["6", "10"], then=["3", "K", "K"])
    round_.act(round_.decide(1, 0, "split"))  # 8, 3 and 8, K
    round_.interrupt("player alice disconnected")
    finish_with_house_defaults(round_)
    system = [(e.hand, e.action) for e in events_of(round_) if getattr(e, "by", "") == BY_SYSTEM]
    assert system == [(0, "stand"), (1, "stand")]
    assert round_.player_net_cents == 2000  # the dealer's 16 draws a K and busts


# The player's rounds in play.


def test_a_player_tracks_rounds_in_play_and_refuses_a_new_one_while_one_is_interrupted() -> None:
    player = Player("alice", "Alice")
    player.blackjack_round_in_play("r1", "real")
    player.blackjack_round_in_play("r2", "real")
    player.blackjack_round_interrupted("r1")
    assert player.blackjack_rounds_in_play() == ["r2"]
    player.check_no_interrupted_round("play")
    with pytest.raises(RoundInterrupted, match="r1") as refused:
        player.check_no_interrupted_round("real")
    assert refused.value.facts == {"round_id": "r1"}
    player.blackjack_round_ended("r1")
    player.check_no_interrupted_round("real")
    assert (player.blackjack_rounds, player.interrupted_rounds) == ({"r2": "real"}, [])
