"""The player aggregate (rules.md 4), given / when / then: one table at a time, presence."""

import pytest

from domain.errors import AlreadyAtTable
from domain.player import Player
from tests.domain.events import given, then


def test_a_player_sits_at_one_table_at_a_time() -> None:
    player = given(Player("pat", "Pat"))
    player.sit_down("t1", "player")
    with pytest.raises(AlreadyAtTable) as refused:
        player.sit_down("t2", "dealer")
    assert refused.value.facts == {"table_id": "t1"}
    player.stand_up("t2")  # not there: nothing to record
    player.stand_up("t1")
    assert then(player) == [
        ("SatDown", {"table_id": "t1", "role": "player"}),
        ("StoodUp", {"table_id": "t1"}),
    ]


def test_presence_is_recorded_only_when_it_changes() -> None:
    player = given(Player("pat", "Pat"))
    player.reconnect()
    player.disconnect()
    player.disconnect()
    player.reconnect()
    assert then(player) == [("Disconnected", {}), ("Reconnected", {})]


def test_a_blackjack_round_in_play_is_kept_until_it_ends() -> None:
    player = given(Player("pat", "Pat"))
    player.blackjack_round_in_play("r1", "real")
    player.blackjack_round_interrupted("r1")
    player.blackjack_round_resumed("r1")
    player.blackjack_round_ended("r1")
    assert then(player) == [
        ("BlackjackRoundInPlay", {"round_id": "r1", "mode": "real"}),
        ("BlackjackRoundInterrupted", {"round_id": "r1"}),
        ("BlackjackRoundResumed", {"round_id": "r1"}),
        ("BlackjackRoundEnded", {"round_id": "r1"}),
    ]
    assert (player.blackjack_rounds, player.interrupted_rounds) == ({}, [])
