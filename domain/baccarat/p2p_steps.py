"""P2P baccarat steps (rules.md 2.1, 4): sit down to deal, be matched, confirm a round,
end it, leave, and what a disconnect or reconnect does at a P2P table.

Each step is called by one application command, inside its unit of work.
"""

from __future__ import annotations

import datetime

from domain.baccarat import rules
from domain.baccarat.p2p import (
    CLOSED,
    SEATED,
    P2PTable,
    eligibility_problem,
    load_lobby,
    load_p2p_table,
)
from domain.baccarat.settle import void_round
from domain.errors import DomainError, NoDealerAvailable
from domain.player import Player, load_player
from domain.protection_guard import dealing_problem
from domain.settings import P2PBaccarat, TableType
from domain.shoe import draw_seed
from domain.tables.coup import Coup, load_coup
from domain.tables.punto_banco import P2P
from domain.unit import Unit
from domain.wallet import Wallet, load_wallet

DEALER, PLAYER = "dealer", "player"


def sit_as_dealer(
    unit: Unit,
    p2p: P2PBaccarat,
    now: datetime.datetime,
    player_id: str,
    mode: str,
    table_type: str,
    auto_confirm: bool,
) -> P2PTable:
    kind = p2p.table_type(table_type)
    _raise_if_ineligible(unit, p2p, kind, load_wallet(unit, player_id, mode), now)
    table = P2PTable(player_id, mode, table_type, auto_confirm)
    unit.add(table)
    dealer = load_player(unit, player_id)
    dealer.reconnect()  # Sitting down to deal is being here.
    dealer.sit_down(table.table_id, DEALER)
    load_lobby(unit, mode, table_type).add(table.table_id)
    return table


def join_as_player(
    unit: Unit, p2p: P2PBaccarat, now: datetime.datetime, player_id: str, mode: str, table_type: str
) -> P2PTable:
    """Seat the player with the longest-waiting eligible dealer of that type and mode."""
    kind = p2p.table_type(table_type)
    load_wallet(unit, player_id, mode)  # The player must exist.
    player = load_player(unit, player_id)
    player.reconnect()  # Asking for a table is being here.
    table = _longest_waiting_eligible(unit, p2p, kind, mode, player_id, now)
    player.sit_down(table.table_id, PLAYER)
    load_lobby(unit, mode, table_type).remove(table.table_id)
    table.seat_player(player_id)
    if table.auto_confirm:
        confirm_round(unit, p2p, table, now)
    return table


def confirm_round(
    unit: Unit,
    p2p: P2PBaccarat,
    table: P2PTable,
    now: datetime.datetime,
    shoe_prefix: list[str] | None = None,
) -> Coup:
    """Open the table's next round and hold the dealer's worst case until it ends."""
    kind = p2p.table_type(table.table_type)
    table.check_ready_to_confirm()
    dealer = load_wallet(unit, table.dealer_id, table.mode)
    _raise_if_ineligible(unit, p2p, kind, dealer, now)
    assert table.player_id is not None
    round_ = Coup.open(  # a one-seat coup the dealer banks
        variant=P2P,
        mode=table.mode,
        player_id=table.player_id,
        banker_id=table.dealer_id,
        bank_cents=0,
        table_id=table.table_id,
        limits=(kind.stake_min_cents, kind.stake_max_cents),
        decks=p2p.decks,
        tie_pays=p2p.tie_pays,
        box=unit.sealing(),
        seed=draw_seed(),
        shoe_prefix=shoe_prefix,
        commission_basis_points=p2p.commission_basis_points,
    )
    round_.check_shoe()
    unit.add(round_)
    dealer.hold(round_.round_id, worst_case_cents(p2p, kind))
    table.confirm_round(round_.round_id)
    return round_


def end_round(unit: Unit, p2p: P2PBaccarat, round_: Coup, now: datetime.datetime) -> Coup | None:
    """After a P2P round settles: free the table, and auto-confirm the next round
    while the dealer is still eligible and, with what this round cost them, not past
    a loss limit; returns that round, if one opened. Else the table waits."""
    assert round_.table_id is not None
    table = load_p2p_table(unit, round_.table_id)
    table.end_round(round_.round_id)
    if close_if_dealer_gone(unit, table):
        return None
    if not table.auto_confirm or table.status != SEATED:
        return None
    kind = p2p.table_type(table.table_type)
    dealer = load_wallet(unit, table.dealer_id, table.mode)
    problem = dealer_problem(unit, p2p, kind, dealer, now)
    if problem is not None:
        table.stop_auto_confirm(f"auto-confirm stopped: {problem.detail}")
        return None
    return confirm_round(unit, p2p, table, now)


def leave_table(unit: Unit, table: P2PTable, player_id: str) -> P2PTable:
    """The dealer leaving closes the table; the player leaving frees the seat. An open
    round is voided either way."""
    open_round = table.round_id
    who = table.leave(player_id)
    if open_round is not None:
        void_round(unit, load_coup(unit, open_round), f"the {who} left")
    if who == DEALER:
        _after_dealer_left(unit, table)
    else:
        _after_player_left(unit, table, player_id)
    return table


def void_idle_round(unit: Unit, round_: Coup) -> None:
    """A P2P round voided for the idle timeout frees its table for the next one."""
    assert round_.table_id is not None
    table = load_p2p_table(unit, round_.table_id)
    table.void_round(round_.round_id, "idle timeout")
    close_if_dealer_gone(unit, table)


def disconnect(unit: Unit, player: Player) -> list[dict[str, str]]:
    """What a disconnect does at the player's P2P table (rules.md 4): the rounds affected."""
    if player.table_id is None:
        return []
    table = load_p2p_table(unit, player.table_id)
    open_round = table.round_id
    who = table.disconnect(player.player_id)
    if who == PLAYER:
        _after_player_left(unit, table, player.player_id)
        if open_round is None:
            return []
        void_round(unit, load_coup(unit, open_round), "the player disconnected before the deal")
        return [{"round_id": open_round, "effect": "voided"}]
    if who == "dealer_left":
        _after_dealer_left(unit, table)
        return []
    assert open_round is not None
    return [{"round_id": open_round, "effect": "continues; the table closes when it ends"}]


def reconnect(unit: Unit, player: Player) -> None:
    """A dealer back before their round ends keeps the table."""
    if player.table_id is not None:
        table = load_p2p_table(unit, player.table_id)
        if table.dealer_id == player.player_id:
            table.reconnect_dealer()


def close_if_dealer_gone(unit: Unit, table: P2PTable) -> bool:
    """A disconnected dealer leaves once no round is in play (rules.md 4)."""
    if table.dealer_connected or table.round_id is not None or table.status == CLOSED:
        return False
    table.leave(table.dealer_id)
    _after_dealer_left(unit, table)
    return True


def worst_case_cents(p2p: P2PBaccarat, kind: TableType) -> int:
    return rules.dealer_worst_case_cents(
        p2p.tie_pays, kind.stake_max_cents, p2p.commission_basis_points
    )


def _after_dealer_left(unit: Unit, table: P2PTable) -> None:
    load_lobby(unit, table.mode, table.table_type).remove(table.table_id)
    load_player(unit, table.dealer_id).stand_up(table.table_id)
    if table.player_id is not None:
        load_player(unit, table.player_id).stand_up(table.table_id)


def _after_player_left(unit: Unit, table: P2PTable, player_id: str) -> None:
    load_player(unit, player_id).stand_up(table.table_id)
    if not close_if_dealer_gone(unit, table):
        load_lobby(unit, table.mode, table.table_type).add(table.table_id)  # Behind those waiting.


def dealer_problem(
    unit: Unit, p2p: P2PBaccarat, kind: TableType, dealer: Wallet, now: datetime.datetime
) -> DomainError | None:
    """Why this wallet may open no round at a table of this type now, or None: short of
    points or money (rules.md 2.1), or past a loss limit (rules.md 7)."""
    problem = eligibility_problem(kind, worst_case_cents(p2p, kind), dealer)
    return problem if problem is not None else dealing_problem(unit, dealer, now)


def _raise_if_ineligible(
    unit: Unit, p2p: P2PBaccarat, kind: TableType, wallet: Wallet, now: datetime.datetime
) -> None:
    problem = dealer_problem(unit, p2p, kind, wallet, now)
    if problem is not None:
        raise problem


def _longest_waiting_eligible(
    unit: Unit,
    p2p: P2PBaccarat,
    kind: TableType,
    mode: str,
    player_id: str,
    now: datetime.datetime,
) -> P2PTable:
    for table_id in load_lobby(unit, mode, kind.name).waiting:
        table = load_p2p_table(unit, table_id)
        if table.dealer_id == player_id or table.status == CLOSED:
            continue
        dealer = load_wallet(unit, table.dealer_id, mode)
        if dealer_problem(unit, p2p, kind, dealer, now) is None:
            return table
    raise NoDealerAvailable(
        f"no eligible dealer is waiting at a type {kind.name} table in {mode} mode; try later"
    )
