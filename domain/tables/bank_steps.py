"""The bank's steps at a player-banked table (rules.md 2.3, 2.4, 4): put it up, decline
it, withdraw it, call banco, settle a coup between the banker and every punter in
one save, and pass the bank on as each game says.

The bank is held on the banker's wallet (`Wallet.hold_bank`) and follows the bank:
a lost coup releases what it took, a won one holds the winnings less the
commission, a bank given up is released whole.
"""

from __future__ import annotations

from domain.baccarat.rules import check_chips
from domain.errors import HouseBanked
from domain.player import load_player
from domain.tables.bank import banco_spot
from domain.tables.chemin_de_fer import CHEMIN_DE_FER
from domain.tables.coup import Coup
from domain.tables.coup_figures import TIED, WON
from domain.tables.en_banque import BANKERS_SEAT, EN_BANQUE
from domain.tables.games import rules_of
from domain.tables.table import Table
from domain.unit import Unit
from domain.wallet import Wallet, load_wallet


def offer_to_a_newcomer(table: Table, player_id: str) -> None:
    """At a new chemin de fer table the bank is offered to the first player who sits
    down; once it has been offered, it goes round the seated players instead."""
    if table.game == CHEMIN_DE_FER and not table.bank_ever_offered:
        table.offer_bank(player_id)


def pass_offer_on(table: Table, player_id: str) -> None:
    """A player leaving while the bank is offered to them passes the offer on."""
    if table.bank_offered_to == player_id:
        table.offer_bank(_next_offer(table, after=player_id))


def check_player_banked(game: str) -> None:
    if not rules_of(game).player_banked:
        raise HouseBanked(f"the house holds the bank at {game}: no player puts one up")


def put_up(unit: Unit, table: Table, player_id: str, amount_cents: int) -> Table:
    check_player_banked(table.game)
    check_chips(amount_cents)  # whole dollars, as every stake at baccarat
    table.put_up_bank(player_id, amount_cents)
    load_wallet(unit, player_id, table.mode).hold_bank(table.table_id, None, amount_cents)
    if table.game == EN_BANQUE and table.seat_of(player_id) != BANKERS_SEAT:
        _seat(unit, table, player_id, BANKERS_SEAT)  # the banker plays from the middle (2.4)
    return table


def decline(table: Table, player_id: str) -> Table:
    """Pass the offer on: at chemin de fer to the next seat in play order; at en banque
    to nobody (any seated player may then put up a bank)."""
    check_player_banked(table.game)
    table.decline_bank(player_id, _next_offer(table, after=player_id))
    return table


def withdraw(unit: Unit, table: Table, player_id: str, staying: bool = True) -> Table:
    """Between coups the banker takes the bank back, and it is offered on; one leaving
    the table (`staying` false) frees the seat they have, the banker's own too."""
    check_player_banked(table.game)
    table.check_banker(player_id)
    table.check_between_coups()
    _give_up(unit, table, None, "withdrawn", staying)
    return table


def call_banco(unit: Unit, table: Table, coup: Coup, player_id: str) -> None:
    """The caller covers the whole bank alone; every other bet goes back to its player."""
    table.check_seated(player_id)
    seat = table.seat_of(player_id)
    assert seat is not None
    failed = table.failed_bancos.get(player_id, 0)
    spot = banco_spot(table.game, seat)
    for who, _, cents in coup.call_banco(player_id, spot, table.banco_suivi, failed):
        load_wallet(unit, who, coup.mode).release(coup.round_id, cents)
    load_wallet(unit, player_id, coup.mode).hold(coup.round_id, coup.bank_cents)


def settle(unit: Unit, coup: Coup) -> None:
    """Each punter's result against the bank, and the bank's against them all; then the
    casino's commission from the banker, and the bank's hold follows the bank."""
    assert coup.banker_id is not None
    nets = coup.nets()
    for player_id in sorted(coup.bets):
        load_wallet(unit, player_id, coup.mode).settle(coup.round_id, nets[player_id], None)
    banker = load_wallet(unit, coup.banker_id, coup.mode)
    banker_net = coup.banker_net_cents()
    if banker_net < 0:  # what the lost coup took from the bank leaves its hold first
        banker.release_bank(coup.table, coup.round_id, -banker_net)
    banker.settle(coup.round_id, banker_net, None)
    if coup.commission_cents:
        banker.charge_commission(coup.round_id, coup.commission_cents)
    grown = banker_net - coup.commission_cents
    if grown > 0:
        banker.hold_bank(coup.table, coup.round_id, grown)


def after_coup(unit: Unit, table: Table, coup: Coup) -> None:
    """The bank moves on (2.3, 2.4): after a lost coup at chemin de fer, after a banco
    that beat it at en banque, when it is empty, or when its banker left: released to
    them and offered on. Otherwise the banker goes on with the whole bank."""
    table.bank_moved(coup.round_id, coup.bank_after_cents)
    lost = coup.banker_net_cents() < 0
    beaten = coup.banco_result() == WON
    gone = coup.banker_id in table.leaving
    passes = lost if table.game == CHEMIN_DE_FER else beaten or coup.bank_after_cents == 0
    if passes or gone:
        _give_up(unit, table, coup.round_id, "lost" if passes else "the banker left")
        caller = coup.banco["player_id"] if coup.banco is not None else None
        if beaten and table.game != CHEMIN_DE_FER and caller not in table.leaving:
            table.offer_bank(caller)  # a winning banco takes the bank, if still here


def banco_settled(table: Table, coup: Coup) -> None:
    """Once the coup has ended, a banco that lost counts: at chemin de fer its caller
    may call again first next coup (suivi); at en banque three bar them. A tied banco
    lost nothing, so it counts for neither."""
    result = coup.banco_result()
    if coup.banco is not None and result != TIED:
        table.banco_settled(coup.banco["player_id"], won=result == WON)


def _give_up(
    unit: Unit, table: Table, round_id: str | None, reason: str, staying: bool = True
) -> None:
    banker = table.banker
    assert banker is not None
    bank = table.give_up_bank(reason)
    if bank:
        _wallet(unit, table, banker).release_bank(table.table_id, round_id, bank)
    if staying and banker not in table.leaving and table.seat_of(banker) == BANKERS_SEAT:
        _back_to_a_side(unit, table, banker)
    table.offer_bank(_next_offer(table, after=banker))


def _back_to_a_side(unit: Unit, table: Table, player_id: str) -> None:
    """En banque (2.4): a banker who gives up the bank goes back to a free side seat (the
    one they left, if it still is), or leaves the table when none is free."""
    free = [seat for seat in rules_of(table.game).seats if seat not in table.seats]
    if not free:
        table.leave(player_id, holds_stakes=False, reason="no side seat free after the bank")
        load_player(unit, player_id).give_up_seat(table.table_id)
        return
    _seat(unit, table, player_id, next((s for s in free if s == table.banker_side_seat), free[0]))


def _seat(unit: Unit, table: Table, player_id: str, seat: str) -> None:
    table.move(player_id, seat)
    load_player(unit, player_id).take_seat(table.table_id, seat)


def _next_offer(table: Table, after: str) -> str | None:
    """At chemin de fer, the next seated player in play order who has not declined the
    bank going round (nor just given it up); at en banque, nobody."""
    if table.game != CHEMIN_DE_FER:
        return None
    passed = {*table.declined, after, *table.leaving}
    return next((who for who in table.play_order(after=after) if who not in passed), None)


def _wallet(unit: Unit, table: Table, player_id: str) -> Wallet:
    return load_wallet(unit, player_id, table.mode)
