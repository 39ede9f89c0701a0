"""A round of any game, as the application's commands take it: the union of every
game's round, finding one by id, and what a deal returns."""

from __future__ import annotations

from dataclasses import dataclass

from domain.blackjack.round import BlackjackRound
from domain.errors import InvalidPlayerId, NotSeated
from domain.rounds import load_round
from domain.tables.coup import Coup
from domain.unit import Unit

Round = BlackjackRound | Coup  # every game's round, for `match`


@dataclass(frozen=True)
class Dealt:
    """A dealt round, and at a P2P table with auto-confirm the next round it opened, so
    the dealer's client need not ask the table for it."""

    round: Round
    next_round: Coup | None


def round_of(unit: Unit, round_id: str, player_id: str | None = None) -> Round:
    """A round of any game; a player named for a one-player round must be its player."""
    round_ = load_round(unit, round_id)
    assert isinstance(round_, BlackjackRound | Coup), type(round_).__name__
    if player_id is not None and round_.player_id not in (None, player_id):
        raise NotSeated(f"player {player_id[:64]} does not play in round {round_id}")
    return round_


def named(player_id: str | None) -> str:
    """At a table every bet, removal and choice names the player it is for."""
    if player_id is None:
        raise InvalidPlayerId("at a table, name the player_id the bet or choice is for")
    return player_id
