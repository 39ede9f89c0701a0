"""Presence (rules.md 4): what a player's going and coming back do, in every game. A
disconnect and an exclusion (rules.md 7) both take the player out of play.

    going:  their P2P round, their coups at tables, then their blackjack rounds in play
            (interrupted), each as its game does it
    back:   a dealer keeps their table, a seated player their seat, interrupted
            blackjack rounds resume; an excluded player comes back to withdraw only
"""

from __future__ import annotations

import datetime

from domain.baccarat import p2p_steps
from domain.blackjack.interruptions import (
    Reconnection,
    interrupt_rounds_in_play,
    resume_interrupted_rounds,
)
from domain.player import Player, load_player
from domain.protection import find_protection
from domain.settings import TableSettings
from domain.tables import steps as tables
from domain.unit import Unit


def leave_play(
    unit: Unit, settings: TableSettings, player: Player, now: datetime.datetime
) -> list[dict[str, str]]:
    """The rounds the player's going affected."""
    player.disconnect()
    at_tables = tables.disconnect(unit, settings, player, now)
    p2p = p2p_steps.disconnect(unit, player)
    return p2p + at_tables + interrupt_rounds_in_play(unit, player)


def come_back(unit: Unit, player_id: str, now: datetime.datetime) -> Reconnection:
    player = load_player(unit, player_id)
    player.reconnect()
    protection = find_protection(unit, player_id)
    if protection is not None and protection.excluded_until(now) is not None:
        # Excluded: back to withdraw, never to play; the open rounds stay ended (rules.md 7).
        return Reconnection(player, [])
    p2p_steps.reconnect(unit, player)
    tables.reconnect(unit, player)
    return Reconnection(player, resume_interrupted_rounds(unit, player))
