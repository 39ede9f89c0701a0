"""The application: its methods are the commands; they all pass the seam's `run`."""

from __future__ import annotations

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate

from domain.baccarat.p2p_steps import P2PCommands
from domain.baccarat.steps import BaccaratCommands
from domain.blackjack_commands import BlackjackCommands
from domain.errors import HistoryUnavailable, InvalidPointsChange, PlayerExists, UnknownPlayer
from domain.ids import MODES, check_player_id, player_uuid
from domain.player import Player
from domain.round_commands import RoundCommands
from domain.seam import CommandSeam, Movement, Outcome, Receipt, Unit, new_id
from domain.wallet import Wallet

POINTS_CHANGE_MAX = 1_000_000_000
REASON_LENGTH_MAX = 500


class CasinoApplication(
    BaccaratCommands, P2PCommands, BlackjackCommands, RoundCommands, CommandSeam
):
    # The name prefixes the PostgreSQL tables (casino_events); never change it.
    name = "casino"

    # Commands.

    def register_player(
        self, player_id: str, display_name: str, receipt: Receipt | None = None
    ) -> Outcome[Player]:
        return self.run(lambda unit: _register(self, unit, player_id, display_name), receipt)

    def deposit(
        self, player_id: str, mode: str, amount_cents: int, receipt: Receipt | None = None
    ) -> Outcome[Movement]:
        def command(unit: Unit) -> Movement:
            movement = Movement(unit.wallet(player_id, mode), new_id())
            movement.wallet.deposit(movement.transaction_id, amount_cents)
            return movement

        return self.run(command, receipt)

    def withdraw(
        self, player_id: str, mode: str, amount_cents: int, receipt: Receipt | None = None
    ) -> Outcome[Movement]:
        def command(unit: Unit) -> Movement:
            movement = Movement(unit.wallet(player_id, mode), new_id())
            movement.wallet.withdraw(movement.transaction_id, amount_cents)
            return movement

        return self.run(command, receipt)

    def adjust_points(
        self, player_id: str, mode: str, change: int, reason: str, receipt: Receipt | None = None
    ) -> Outcome[Wallet]:
        _check_points_adjustment(change, reason)

        def command(unit: Unit) -> Wallet:
            wallet = unit.wallet(player_id, mode)
            wallet.change_points(change, "operator", None, reason.strip())
            return wallet

        return self.run(command, receipt)

    # Queries.

    def player(self, player_id: str) -> Player:
        check_player_id(player_id)
        try:
            player: Aggregate = self.fresh.get(player_uuid(player_id))
        except AggregateNotFoundError:
            raise UnknownPlayer(f"no player {player_id} is registered") from None
        assert isinstance(player, Player)
        return player

    def wallet(self, player_id: str, mode: str) -> Wallet:
        return Unit(self, self.fresh).wallet(player_id, mode)


def _register(app: CasinoApplication, unit: Unit, player_id: str, display_name: str) -> Player:
    check_player_id(player_id)
    if player_uuid(player_id) in app.repository:
        raise PlayerExists(f"player {player_id} is already registered")
    player = Player(player_id, display_name)
    unit.add(player)
    for mode in MODES:
        unit.add(Wallet(player_id, mode))
    return player


def _check_points_adjustment(change: int, reason: str) -> None:
    if change == 0 or abs(change) > POINTS_CHANGE_MAX:
        raise InvalidPointsChange(
            f"change must be a non-zero whole number of points within ±{POINTS_CHANGE_MAX}"
        )
    if not reason.strip() or len(reason) > REASON_LENGTH_MAX:
        raise InvalidPointsChange(f"a reason of 1-{REASON_LENGTH_MAX} characters is required")


def check_history_available(mode: str) -> None:
    """Game history is kept for real money only (RULES.md 4, seed 000)."""
    if mode != "real":
        raise HistoryUnavailable("play-money rounds have no game history")
