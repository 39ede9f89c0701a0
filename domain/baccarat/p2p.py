"""Peer-to-peer baccarat tables (rules.md 2.1): a player deals, another plays.

`P2PTable` is one dealer's table; `Lobby` keeps, per mode and table type, the
tables waiting for a player in the order they started waiting, so two players
asking for the last free dealer at once conflict on the lobby and exactly one
of them gets it.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.errors import DomainError, NotAtTable, NotEligibleToDeal, TableNotReady, UnknownTable
from domain.ids import named_uuid
from domain.money import format_cents
from domain.settings import TableType
from domain.unit import Unit, parse_public_id
from domain.wallet import Wallet

WAITING, SEATED, CLOSED = "waiting", "seated", "closed"


class P2PTable(FastCopy, Aggregate):
    TOPIC = "casino:P2PTable"

    class Created(Aggregate.Created):
        TOPIC = "casino:P2PTable.Opened"
        dealer_id: str
        mode: str
        table_type: str
        auto_confirm: bool

    @event(Created)
    def __init__(self, dealer_id: str, mode: str, table_type: str, auto_confirm: bool) -> None:
        self.dealer_id, self.mode, self.table_type = dealer_id, mode, table_type
        self.auto_confirm = auto_confirm
        self.auto_confirm_chosen = auto_confirm  # the dealer's choice, back after a reconnect
        self.status = WAITING
        self.player_id: str | None = None
        self.round_id: str | None = None  # The confirmed round not yet ended.
        self.rounds_played = 0
        self.notice: str | None = None  # What the other side should know: who left, why.
        self.dealer_connected = True

    @property
    def table_id(self) -> str:
        return str(self.id)

    def seat_player(self, player_id: str) -> None:
        assert self.status == WAITING and player_id != self.dealer_id
        self._player_seated(player_id)

    def confirm_round(self, round_id: str) -> None:
        self.check_ready_to_confirm()
        self._round_confirmed(round_id)

    def check_ready_to_confirm(self) -> None:
        if self.status != SEATED:
            raise TableNotReady(f"table {self.table_id} has no player seated: nothing to confirm")
        if self.round_id is not None:
            raise TableNotReady(f"round {self.round_id} is still in play at this table")

    def end_round(self, round_id: str) -> None:
        assert self.round_id == round_id
        self._round_ended(round_id)

    def void_round(self, round_id: str, reason: str) -> None:
        if self.round_id == round_id:
            self._round_voided(round_id, reason)

    def disconnect(self, player_id: str) -> str:
        """Who disconnected: the player leaves at once; the dealer's confirmed round goes
        on (the dealer has no decisions to make) and the table closes when it ends."""
        if player_id == self.player_id and self.status == SEATED:
            self._player_disconnected(player_id)
            return "player"
        if player_id == self.dealer_id and self.status != CLOSED:
            if self.round_id is None:
                self._dealer_left(player_id)
                return "dealer_left"
            if self.dealer_connected:  # Reported twice: already recorded.
                self._dealer_disconnected(player_id)
            return "dealer"
        raise NotAtTable(f"{player_id} is not at table {self.table_id}")

    def reconnect_dealer(self) -> None:
        if not self.dealer_connected and self.status != CLOSED:
            self._dealer_reconnected(self.dealer_id)

    def stop_auto_confirm(self, reason: str) -> None:
        if self.auto_confirm:
            self._auto_confirm_stopped(reason)

    def leave(self, player_id: str) -> str:
        """Who leaves: 'dealer' closes the table, 'player' frees the seat."""
        if player_id == self.dealer_id and self.status != CLOSED:
            self._dealer_left(player_id)
            return "dealer"
        if player_id == self.player_id and self.status == SEATED:
            self._player_left(player_id)
            return "player"
        raise NotAtTable(f"{player_id} is not at table {self.table_id}")

    @event("PlayerSeated", topic="casino:P2PTable.PlayerSeated")
    def _player_seated(self, player_id: str) -> None:
        self.player_id, self.status, self.notice = player_id, SEATED, None

    @event("RoundConfirmed", topic="casino:P2PTable.RoundConfirmed")
    def _round_confirmed(self, round_id: str) -> None:
        self.round_id = round_id

    @event("RoundEnded", topic="casino:P2PTable.RoundEnded")
    def _round_ended(self, round_id: str) -> None:
        self.round_id = None
        self.rounds_played += 1

    @event("RoundVoided", topic="casino:P2PTable.RoundVoided")
    def _round_voided(self, round_id: str, reason: str) -> None:
        self.round_id = None
        self.notice = f"round {round_id} was voided: {reason}"

    @event("AutoConfirmStopped", topic="casino:P2PTable.AutoConfirmStopped")
    def _auto_confirm_stopped(self, reason: str) -> None:
        self.auto_confirm = False
        self.notice = reason

    @event("PlayerLeft", topic="casino:P2PTable.PlayerLeft")
    def _player_left(self, player_id: str) -> None:
        self.player_id, self.status, self.round_id = None, WAITING, None
        self.notice = f"player {player_id} left the table"

    @event("PlayerDisconnected", topic="casino:P2PTable.PlayerDisconnected")
    def _player_disconnected(self, player_id: str) -> None:
        self.player_id, self.status, self.round_id = None, WAITING, None
        self.notice = f"player {player_id} disconnected and left the table"

    @event("DealerDisconnected", topic="casino:P2PTable.DealerDisconnected")
    def _dealer_disconnected(self, dealer_id: str) -> None:
        self.dealer_connected, self.auto_confirm = False, False
        self.notice = f"dealer {dealer_id} disconnected: this round goes on, then the table closes"

    @event("DealerReconnected", topic="casino:P2PTable.DealerReconnected")
    def _dealer_reconnected(self, dealer_id: str) -> None:
        self.dealer_connected = True
        self.auto_confirm = self.auto_confirm_chosen  # eligibility is checked at each confirm
        self.notice = f"dealer {dealer_id} is back"

    @event("DealerLeft", topic="casino:P2PTable.DealerLeft")
    def _dealer_left(self, dealer_id: str) -> None:
        self.status, self.round_id = CLOSED, None
        self.notice = f"dealer {dealer_id} left: the table is closed"


class Lobby(FastCopy, Aggregate):
    """The tables of one mode and type that wait for a player, longest-waiting first."""

    TOPIC = "casino:P2PLobby"

    class Created(Aggregate.Created):
        TOPIC = "casino:P2PLobby.Opened"
        mode: str
        table_type: str

    @staticmethod
    def create_id(mode: str, table_type: str) -> UUID:
        return lobby_uuid(mode, table_type)

    @event(Created)
    def __init__(self, mode: str, table_type: str) -> None:
        self.mode, self.table_type = mode, table_type
        self.waiting: list[str] = []

    def add(self, table_id: str) -> None:
        if table_id not in self.waiting:
            self._table_waiting(table_id)

    def remove(self, table_id: str) -> None:
        if table_id in self.waiting:
            self._table_taken(table_id)

    @event("TableWaiting", topic="casino:P2PLobby.TableWaiting")
    def _table_waiting(self, table_id: str) -> None:
        self.waiting.append(table_id)

    @event("TableTaken", topic="casino:P2PLobby.TableTaken")
    def _table_taken(self, table_id: str) -> None:
        self.waiting.remove(table_id)


def lobby_uuid(mode: str, table_type: str) -> UUID:
    return named_uuid(f"lobby/{mode}/{table_type}")


def load_p2p_table(unit: Unit, table_id: str) -> P2PTable:
    def missing() -> UnknownTable:
        return UnknownTable(f"no table {table_id[:80]} exists")

    return unit.get(P2PTable, parse_public_id(table_id, missing), missing)


def load_lobby(unit: Unit, mode: str, table_type: str) -> Lobby:
    """The lobby of a mode and table type, opened the first time it is needed."""
    lobby = unit.find(Lobby, lobby_uuid(mode, table_type))
    if lobby is None:
        lobby = Lobby(mode, table_type)  # Two first-comers conflict; the seam retries one.
        unit.add(lobby)
    return lobby


def eligibility_problem(
    kind: TableType, worst_case_cents: int, wallet: Wallet
) -> DomainError | None:
    """Why this wallet may not deal at a table of this type, or None (rules.md 2.1):
    it needs the type's dealer points, and the worst case of one round available,
    and holding that worst case must keep its balance under the ceiling (rules.md 6)."""
    if wallet.points < kind.points_min:
        short = kind.points_min - wallet.points
        return NotEligibleToDeal(
            f"dealing at a type {kind.name} table needs {kind.points_min} dealer points; "
            f"{wallet.player_id} has {wallet.points}, {short} short",
            requirement="dealer_points",
            required=kind.points_min,
            actual=wallet.points,
            shortfall=short,
        )
    if wallet.available_cents < worst_case_cents:
        short_cents = worst_case_cents - wallet.available_cents
        return NotEligibleToDeal(
            f"dealing at a type {kind.name} table needs {format_cents(worst_case_cents)} "
            f"available (the worst case of one round); {format_cents(wallet.available_cents)} "
            f"is available, {format_cents(short_cents)} short",
            requirement="available_balance",
            required=format_cents(worst_case_cents),
            actual=format_cents(wallet.available_cents),
            shortfall=format_cents(short_cents),
        )
    return wallet.ceiling_problem(hold_cents=worst_case_cents)
