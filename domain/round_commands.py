"""Commands on any round (API.md, Rounds): each loads the round and hands it to its game."""

from __future__ import annotations

import datetime
from typing import Any, Protocol

from eventsourcing.domain import Aggregate

from domain.baccarat.round import BaccaratRound
from domain.baccarat.steps import BaccaratGame
from domain.blackjack.round import BlackjackRound
from domain.blackjack.steps import BlackjackGame
from domain.seam import CommandSeam, Outcome, Receipt, Unit


class Game(Protocol):
    def place_bet(self, unit: Unit, round_: Any, target: str, amount_cents: int) -> None: ...

    def remove_bet(self, unit: Unit, round_: Any, target: str) -> None: ...

    def deal(self, unit: Unit, round_: Any) -> None: ...

    def end_idle(self, unit: Unit, round_: Any, idle_since: datetime.datetime) -> bool: ...


GAMES: dict[type[Aggregate], Game] = {
    BaccaratRound: BaccaratGame(),
    BlackjackRound: BlackjackGame(),
}


class RoundCommands(CommandSeam):
    def place_bet(
        self, round_id: str, target: str, amount_cents: int, receipt: Receipt | None = None
    ) -> Outcome[Aggregate]:
        return self._on_round(
            round_id, lambda game, unit, r: game.place_bet(unit, r, target, amount_cents), receipt
        )

    def remove_bet(
        self, round_id: str, target: str, receipt: Receipt | None = None
    ) -> Outcome[Aggregate]:
        return self._on_round(
            round_id, lambda game, unit, r: game.remove_bet(unit, r, target), receipt
        )

    def deal(self, round_id: str, receipt: Receipt | None = None) -> Outcome[Aggregate]:
        return self._on_round(round_id, lambda game, unit, r: game.deal(unit, r), receipt)

    def end_idle_round(self, round_id: str, idle_since: datetime.datetime) -> Outcome[bool]:
        """End a round that has seen no action since `idle_since`, as its game does it
        (RULES.md 4); the result says whether it was ended."""

        def command(unit: Unit) -> bool:
            round_ = unit.round(Aggregate, round_id)
            return GAMES[type(round_)].end_idle(unit, round_, idle_since)

        return self.run(command)

    def round(self, round_id: str) -> Aggregate:
        return Unit(self, self.fresh).round(Aggregate, round_id)

    def _on_round(self, round_id: str, step: Any, receipt: Receipt | None) -> Outcome[Aggregate]:
        def command(unit: Unit) -> Aggregate:
            round_ = unit.round(Aggregate, round_id)
            step(GAMES[type(round_)], unit, round_)
            return round_

        return self.run(command, receipt)
