"""Blackjack commands (API.md, Rounds): open a round in a hall, act, repeat and cancel bets.

Betting, removing a bet and the deal are the round commands every game shares
(`domain/round_commands.py`); blackjack's part of them is `BlackjackGame`.
"""

from __future__ import annotations

import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from domain.blackjack.round import BlackjackRound
from domain.blackjack.steps import BlackjackGame, settle_if_over
from domain.errors import DomainError, IllegalAction, NoBets, NoPreviousBets
from domain.round_commands import GAMES
from domain.seam import CommandSeam, Outcome, Receipt, Unit
from domain.settings import check_certification
from domain.shoe import draw_seed

BLACKJACK = BlackjackGame()


class BlackjackCommands(CommandSeam):
    def open_blackjack_round(
        self,
        player_id: str,
        mode: str,
        hall: str,
        shoe_prefix: list[str] | None = None,
        receipt: Receipt | None = None,
    ) -> Outcome[BlackjackRound]:
        check_certification(self.games, shoe_prefix)
        settings = self.games.blackjack
        limits = settings.hall(hall)

        def command(unit: Unit) -> BlackjackRound:
            unit.wallet(player_id, mode)  # The player must exist.
            unit.player(player_id).check_no_interrupted_round(mode)
            round_ = BlackjackRound.open(
                mode=mode,
                player_id=player_id,
                hall=limits,
                decks=settings.decks,
                seed=draw_seed(),
                shoe_prefix=shoe_prefix,
            )
            round_.check_shoe()
            unit.add(round_)
            return round_

        return self.run(command, receipt)

    def act(
        self, round_id: str, box: int, hand: int, action: str, receipt: Receipt | None = None
    ) -> Outcome[BlackjackRound]:
        """The player's decision on the hand in play: hit, stand, double, split or insurance."""

        def command(unit: Unit) -> BlackjackRound:
            round_ = _blackjack_round(unit, round_id, IllegalAction, "takes no decisions")
            BLACKJACK.act(unit, round_, box, hand, action)
            return round_

        return self.run(command, receipt)

    def finish_abandoned_round(
        self, round_id: str, interrupted_before: datetime.datetime
    ) -> Outcome[BlackjackRound | None]:
        """Finish a round interrupted at or before `interrupted_before` with the house
        defaults (RULES.md 4): no insurance, stand on every open hand, each a decision
        by the system; then the dealer plays and the round settles as usual. A round
        resumed since, or interrupted again later, is left alone: the result is None."""

        def command(unit: Unit) -> BlackjackRound | None:
            round_ = unit.round(BlackjackRound, round_id)
            interrupted_at = round_.interrupted_at
            if interrupted_at is None or interrupted_at > interrupted_before:
                return None
            round_.finish_with_house_defaults()
            settle_if_over(unit, round_)
            return round_

        return self.run(command)

    def repeat_bets(self, round_id: str, receipt: Receipt | None = None) -> Outcome[BlackjackRound]:
        def command(unit: Unit) -> BlackjackRound:
            round_ = _blackjack_round(unit, round_id, NoPreviousBets, "has no bets to repeat")
            BLACKJACK.repeat_bets(unit, round_)
            return round_

        return self.run(command, receipt)

    def cancel_bets(self, round_id: str, receipt: Receipt | None = None) -> Outcome[Aggregate]:
        """Take every stake of a round back before the deal, whatever the game."""

        def command(unit: Unit) -> Aggregate:
            round_: Aggregate = unit.round(Aggregate, round_id)
            bets: dict[Any, int] = vars(round_)["bets"]  # Every round keeps its bets by target.
            if not bets:
                raise NoBets("there are no bets to cancel")
            for target in sorted(bets):
                GAMES[type(round_)].remove_bet(unit, round_, str(target))
            return round_

        return self.run(command, receipt)


def _blackjack_round(
    unit: Unit, round_id: str, refusal: type[DomainError], why: str
) -> BlackjackRound:
    round_ = unit.round(Aggregate, round_id)
    if not isinstance(round_, BlackjackRound):
        raise refusal(f"round {round_id} is not a blackjack round: it {why}")
    return round_
