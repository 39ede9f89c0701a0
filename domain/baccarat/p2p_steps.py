"""P2P baccarat commands (RULES.md 2.1): sit down to deal, be matched, confirm, leave.

Disconnect and reconnect (RULES.md 4) live here too: they act on the player's P2P
table, and on their blackjack rounds in play (`domain/blackjack_interruptions.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.baccarat.p2p import CLOSED, SEATED, Table
from domain.baccarat.round import OPEN, P2P, BaccaratRound
from domain.blackjack.interruptions import interrupt_rounds_in_play, resume_interrupted_rounds
from domain.blackjack.round import BlackjackRound
from domain.errors import NoDealerAvailable, NotEligibleToDeal, UnknownTableType
from domain.money import format_cents
from domain.player import Player
from domain.seam import CommandSeam, Outcome, Receipt, Unit
from domain.settings import P2PBaccarat, TableType, check_certification
from domain.shoe import draw_seed
from domain.wallet import Wallet


@dataclass(frozen=True)
class Reconnection:
    """A reconnected player, and their blackjack rounds in play (resumed ones included)."""

    player: Player
    blackjack_rounds: list[BlackjackRound]


class P2PCommands(CommandSeam):
    def sit_as_dealer(
        self,
        player_id: str,
        mode: str,
        table_type: str,
        auto_confirm: bool,
        receipt: Receipt | None = None,
    ) -> Outcome[Table]:
        kind = self.table_type(table_type)

        def command(unit: Unit) -> Table:
            wallet = unit.wallet(player_id, mode)
            _raise_if_ineligible(unit.games.p2p, kind, wallet)
            table = Table(player_id, mode, table_type, auto_confirm)
            unit.add(table)
            dealer = unit.player(player_id)
            dealer.reconnect()  # Sitting down to deal is being here.
            dealer.sit_down(table.table_id, "dealer")
            unit.lobby(mode, table_type).add(table.table_id)
            return table

        return self.run(command, receipt)

    def join_as_player(
        self, player_id: str, mode: str, table_type: str, receipt: Receipt | None = None
    ) -> Outcome[Table]:
        kind = self.table_type(table_type)

        def command(unit: Unit) -> Table:
            unit.wallet(player_id, mode)  # The player must exist.
            player = unit.player(player_id)
            player.reconnect()  # Asking for a table is being here.
            table = _longest_waiting_eligible(unit, kind, mode, player_id)
            player.sit_down(table.table_id, "player")
            unit.lobby(mode, table_type).remove(table.table_id)
            table.seat_player(player_id)
            if table.auto_confirm:
                confirm_round(unit, table)
            return table

        return self.run(command, receipt)

    def confirm(
        self, table_id: str, shoe_prefix: list[str] | None = None, receipt: Receipt | None = None
    ) -> Outcome[BaccaratRound]:
        check_certification(self.games, shoe_prefix)
        return self.run(
            lambda unit: confirm_round(unit, unit.table(table_id), shoe_prefix), receipt
        )

    def leave_table(
        self, table_id: str, player_id: str, receipt: Receipt | None = None
    ) -> Outcome[Table]:
        def command(unit: Unit) -> Table:
            table = unit.table(table_id)
            open_round = table.round_id
            who = table.leave(player_id)
            if open_round is not None:
                void_round(unit, unit.round(BaccaratRound, open_round), f"the {who} left")
            if who == "dealer":
                _after_dealer_left(unit, table)
            else:
                _after_player_left(unit, table, player_id)
            return table

        return self.run(command, receipt)

    def disconnect(
        self, player_id: str, receipt: Receipt | None = None
    ) -> Outcome[list[dict[str, str]]]:
        """The upstream service lost a player (RULES.md 4); returns the rounds affected:
        their P2P round, then their blackjack rounds in play, now interrupted."""

        def command(unit: Unit) -> list[dict[str, str]]:
            player = unit.player(player_id)
            player.disconnect()
            affected = []
            if player.table_id is not None:
                affected = _disconnect_from_table(unit, unit.table(player.table_id), player_id)
            return affected + interrupt_rounds_in_play(unit, player)

        return self.run(command, receipt)

    def reconnect(self, player_id: str, receipt: Receipt | None = None) -> Outcome[Reconnection]:
        """The player is back: a dealer keeps their table, interrupted blackjack rounds resume."""

        def command(unit: Unit) -> Reconnection:
            player = unit.player(player_id)
            player.reconnect()
            if player.table_id is not None:
                table = unit.table(player.table_id)
                if table.dealer_id == player_id:
                    table.reconnect_dealer()
            return Reconnection(player, resume_interrupted_rounds(unit, player))

        return self.run(command, receipt)

    def table_type(self, name: str) -> TableType:
        types = self.games.p2p.table_types
        if name not in types:
            raise UnknownTableType(f"table type {name!r} is not one of {', '.join(types)}")
        return types[name]

    def table(self, table_id: str) -> Table:
        return Unit(self, self.fresh).table(table_id)


def _disconnect_from_table(unit: Unit, table: Table, player_id: str) -> list[dict[str, str]]:
    open_round = table.round_id
    who = table.disconnect(player_id)
    if who == "player":
        _after_player_left(unit, table, player_id)
        if open_round is None:
            return []
        reason = "the player disconnected before the deal"
        void_round(unit, unit.round(BaccaratRound, open_round), reason)
        return [{"round_id": open_round, "effect": "voided"}]
    if who == "dealer_left":
        _after_dealer_left(unit, table)
        return []
    assert open_round is not None
    return [{"round_id": open_round, "effect": "continues; the table closes when it ends"}]


def _after_dealer_left(unit: Unit, table: Table) -> None:
    unit.lobby(table.mode, table.table_type).remove(table.table_id)
    unit.player(table.dealer_id).stand_up(table.table_id)
    if table.player_id is not None:
        unit.player(table.player_id).stand_up(table.table_id)


def _after_player_left(unit: Unit, table: Table, player_id: str) -> None:
    unit.player(player_id).stand_up(table.table_id)
    if not close_if_dealer_gone(unit, table):
        unit.lobby(table.mode, table.table_type).add(table.table_id)  # Behind those waiting.


def close_if_dealer_gone(unit: Unit, table: Table) -> bool:
    """A disconnected dealer leaves once no round is in play (RULES.md 4)."""
    if table.dealer_connected or table.round_id is not None or table.status == CLOSED:
        return False
    table.leave(table.dealer_id)
    _after_dealer_left(unit, table)
    return True


def confirm_round(unit: Unit, table: Table, shoe_prefix: list[str] | None = None) -> BaccaratRound:
    """Open the table's next round and hold the dealer's worst case until it ends."""
    p2p, kind = unit.games.p2p, unit.games.p2p.table_types[table.table_type]
    table.check_ready_to_confirm()
    dealer = unit.wallet(table.dealer_id, table.mode)
    _raise_if_ineligible(p2p, kind, dealer)
    assert table.player_id is not None
    round_ = BaccaratRound.open(
        variant=P2P,
        mode=table.mode,
        player_id=table.player_id,
        dealer_id=table.dealer_id,
        table_id=table.table_id,
        limits=(kind.stake_min_cents, kind.stake_max_cents),
        decks=p2p.decks,
        tie_pays=p2p.tie_pays,
        seed=draw_seed(),
        shoe_prefix=shoe_prefix,
        commission_basis_points=p2p.commission_basis_points,
    )
    round_.check_shoe()
    unit.add(round_)
    dealer.hold(round_.round_id, p2p.worst_case_cents(kind))
    table.confirm_round(round_.round_id)
    return round_


def end_round(unit: Unit, round_: BaccaratRound) -> None:
    """After a P2P round settles: free the table, and auto-confirm the next round
    while the dealer is still eligible."""
    assert round_.table_id is not None
    table = unit.table(round_.table_id)
    table.end_round(round_.round_id)
    if close_if_dealer_gone(unit, table):
        return
    if not table.auto_confirm or table.status != SEATED:
        return
    kind = unit.games.p2p.table_types[table.table_type]
    problem = eligibility_problem(unit.games.p2p, kind, unit.wallet(table.dealer_id, table.mode))
    if problem is None:
        confirm_round(unit, table)
    else:
        table.stop_auto_confirm(f"auto-confirm stopped: {problem.detail}")


def void_round(unit: Unit, round_: BaccaratRound, reason: str) -> None:
    """Void an open round: every stake and the dealer's hold go back; no commission, no points."""
    if round_.status != OPEN:
        return
    round_.void(reason)
    for participant in (round_.player_id, round_.dealer_id):
        if participant is None:
            continue
        wallet = unit.wallet(participant, round_.mode)
        if round_.round_id in wallet.holds:
            wallet.release(round_.round_id)


def eligibility_problem(
    p2p: P2PBaccarat, kind: TableType, wallet: Wallet
) -> NotEligibleToDeal | None:
    """Why this wallet may not deal at a table of this type, or None (RULES.md 2.1)."""
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
    worst = p2p.worst_case_cents(kind)
    if wallet.available_cents < worst:
        short_cents = worst - wallet.available_cents
        return NotEligibleToDeal(
            f"dealing at a type {kind.name} table needs {format_cents(worst)} available "
            f"(the worst case of one round); {format_cents(wallet.available_cents)} is "
            f"available, {format_cents(short_cents)} short",
            requirement="available_balance",
            required=format_cents(worst),
            actual=format_cents(wallet.available_cents),
            shortfall=format_cents(short_cents),
        )
    return None


def _raise_if_ineligible(p2p: P2PBaccarat, kind: TableType, wallet: Wallet) -> None:
    problem = eligibility_problem(p2p, kind, wallet)
    if problem is not None:
        raise problem


def _longest_waiting_eligible(unit: Unit, kind: TableType, mode: str, player_id: str) -> Table:
    for table_id in unit.lobby(mode, kind.name).waiting:
        table = unit.table(table_id)
        if table.dealer_id == player_id or table.status == CLOSED:
            continue
        dealer = unit.wallet(table.dealer_id, mode)
        if eligibility_problem(unit.games.p2p, kind, dealer) is None:
            return table
    raise NoDealerAvailable(
        f"no eligible dealer is waiting at a type {kind.name} table in {mode} mode; try later"
    )
