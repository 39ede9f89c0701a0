"""Interrupted blackjack rounds (rules.md 4): a round in play whose player is reported
disconnected is held exactly as it was, resumes when they reconnect, and is finished
with the house defaults if they do not come back within the resume window.

How a player's rounds are found: from state on the Player aggregate, not from a
read model. The player keeps the ids of their blackjack rounds in play (dealt, not
yet settled), and which of them are interrupted. A round joins that list in the
save that deals it and leaves it in the save that settles it; it is marked
interrupted and resumed in the same save as the round's own `Interrupted` and
`Resumed` events. A disconnect saves the Player too (its `Disconnected` event), so
a disconnect and a deal racing with it, in this process or another, save the same
Player version: one of them loses the optimistic-concurrency check and the seam
runs it again on fresh state. If the deal comes second it sees the player gone and
interrupts its round at once; if the disconnect comes second it finds the round.
A list read from a read model could miss a round dealt after the read and before
the disconnect's save, and that round would then never time out.

The cost is one Player event when a round goes into play and one when it settles;
a round settled at the deal (a dealer's blackjack, every box a blackjack) costs
none. Players are snapshotted like wallets, so loading one stays cheap.

The resume window is kept by `infra/workers.py`, which reads the interrupted rounds
and the time of their interruption from a read model
(`projections/interrupted_rounds.py`) and passes a cut-off time to
`finish_abandoned_round`, which re-checks the round itself
(`domain/blackjack/steps.py: finish_abandoned`).
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.blackjack import play as rules
from domain.blackjack.hands import BOXES_MAX
from domain.blackjack.round import (
    BY_SYSTEM,
    IN_PLAY,
    INTERRUPTED_STATUS,
    SETTLED_STATUS,
    BlackjackRound,
    load_blackjack_round,
)
from domain.blackjack.state import PHASE_INSURANCE
from domain.player import Player, load_player
from domain.unit import Unit


@dataclass(frozen=True)
class Reconnection:
    """A reconnected player, and their blackjack rounds in play (resumed ones included)."""

    player: Player
    blackjack_rounds: list[BlackjackRound]


INTERRUPTED_EFFECT = "interrupted"
# The house defaults decide each box's insurance and each of its hands (two after a split).
SYSTEM_DECISIONS_MAX = BOXES_MAX * 3


def interrupt_rounds_in_play(unit: Unit, player: Player) -> list[dict[str, str]]:
    """Hold every blackjack round the player has in play; the disconnect's answer."""
    affected = []
    for round_id in player.blackjack_rounds_in_play():
        _interrupt(player, load_blackjack_round(unit, round_id))
        affected.append({"round_id": round_id, "effect": INTERRUPTED_EFFECT})
    return affected


def resume_interrupted_rounds(unit: Unit, player: Player) -> list[BlackjackRound]:
    """Resume every interrupted round; return all the player's rounds in play, oldest first."""
    for round_id in list(player.interrupted_rounds):
        load_blackjack_round(unit, round_id).resume()
        player.blackjack_round_resumed(round_id)
    return [load_blackjack_round(unit, round_id) for round_id in player.blackjack_rounds]


def after_deal(unit: Unit, round_: BlackjackRound) -> None:
    """A round left in play by its deal joins the player's rounds; if the player is
    away by then (their disconnect was saved first), it is interrupted at once."""
    if round_.status != IN_PLAY:
        return
    player = load_player(unit, round_.player_id)
    player.blackjack_round_in_play(round_.round_id, round_.mode)
    if not player.connected:
        _interrupt(player, round_)


def after_settlement(unit: Unit, round_: BlackjackRound) -> None:
    load_player(unit, round_.player_id).blackjack_round_ended(round_.round_id)


def _interrupt(player: Player, round_: BlackjackRound, reason: str | None = None) -> None:
    round_.interrupt(reason or f"player {player.player_id} disconnected")
    player.blackjack_round_interrupted(round_.round_id)


def finish_idle_round(unit: Unit, round_: BlackjackRound) -> None:
    """A round in play whose player, still connected, stopped acting for the idle
    timeout: finished like an abandoned one. Voiding it instead would hand back the
    stake of a hand the player has already seen losing."""
    _interrupt(load_player(unit, round_.player_id), round_, "no action before the idle timeout")
    finish_with_house_defaults(round_)


def finish_with_house_defaults(round_: BlackjackRound) -> None:
    """The player did not come back in time (rules.md 4): the system declines
    insurance and stands on every open hand, then the dealer plays and pays.

    The defaults add no stake, so nothing more is held.
    """
    assert round_.status == INTERRUPTED_STATUS, round_.status
    for _ in range(SYSTEM_DECISIONS_MAX):
        turn = round_.next_turn()
        if turn is None:
            break
        insurance = round_.state["phase"] == PHASE_INSURANCE
        action = rules.NO_INSURANCE if insurance else rules.STAND
        round_.act(round_.decide(turn.box_number, turn.hand_index, action, by=BY_SYSTEM))
    assert round_.status == SETTLED_STATUS, "the house defaults always finish the round"
