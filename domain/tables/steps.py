"""The steps of multi-player tables (rules.md 2.2-2.4, 4): open a table, sit down,
leave, open a coup, bet, deal, make or default a choice, settle every player in one
save, and what a disconnect does at each table a player sits at. The bank's own
steps, at a player-banked table, are `domain/tables/bank_steps.py`.

Each step is called by one application command, inside its unit of work; every
wallet a coup touches is loaded into that unit, so the whole coup settles in one
atomic save.
"""

from __future__ import annotations

import datetime

from domain.baccarat.odds import chance_any_wins
from domain.baccarat.rules import points_for_stake
from domain.bonus import baccarat_wagered, is_surebet
from domain.bonus_steps import wallet_at
from domain.errors import InvalidLimits, NoBank
from domain.money import CENTS_PER_DOLLAR, format_cents
from domain.player import Player, load_player
from domain.settings import GameSettings, TableSettings
from domain.shoe import draw_seed
from domain.tables import bank_steps
from domain.tables.coup import OPEN, SETTLED_STATUS, Coup, load_coup
from domain.tables.games import rules_of
from domain.tables.table import Table, load_table
from domain.unit import Unit
from domain.wallet import CASINO_BANK, load_wallet


def open_table(
    unit: Unit,
    settings: TableSettings,
    game: str,
    mode: str,
    bet_limits: tuple[int, int] | None,
    bank_limits: tuple[int, int] | None = None,
) -> Table:
    """A table of a game, with the game's default limits or narrower ones."""
    defaults = settings.game(game)
    bet_min, bet_max = bet_limits or (defaults.bet_min_cents, defaults.bet_max_cents)
    _check_limits(defaults.name, bet_min, bet_max, defaults.bet_min_cents, defaults.bet_max_cents)
    bank_min, bank_max = bank_limits or (defaults.bank_min_cents, defaults.bank_max_cents)
    if bank_limits is not None or defaults.bank_max_cents:
        _check_limits(game, bank_min, bank_max, defaults.bank_min_cents, defaults.bank_max_cents)
    if rules_of(game).player_banked and bet_min > bank_max:
        raise InvalidLimits(
            f"a {game} table's minimum bet, {format_cents(bet_min)}, is above the largest "
            f"bank it allows, {format_cents(bank_max)}: no bet could be covered"
        )
    table = Table(game, mode, bet_min, bet_max, bank_min, bank_max)
    unit.add(table)
    return table


def sit(unit: Unit, table: Table, player_id: str, seat: str) -> Table:
    rules_of(table.game).check_seat(seat)
    load_wallet(unit, player_id, table.mode)  # The player must exist.
    player = load_player(unit, player_id)
    player.reconnect()  # Sitting down is being here.
    table.sit(player_id, seat)
    player.take_seat(table.table_id, seat)
    bank_steps.offer_to_a_newcomer(table, player_id)
    return table


def leave(
    unit: Unit,
    settings: TableSettings,
    table: Table,
    player_id: str,
    now: datetime.datetime,
    reason: str = "left the table",
) -> Coup | None:
    """The seat frees at once, or when the coup ends if it holds the player's stakes (a
    banker's bank among them); a banker leaving between coups withdraws the bank, an
    offer of it passes on, and a choice they owe is made by the system at once
    (rules.md 4). Returns the coup in play if it holds their stakes."""
    if table.banker == player_id and table.round_id is None:
        bank_steps.withdraw(unit, table, player_id, staying=False)
    bank_steps.pass_offer_on(table, player_id)
    coup = _coup_holding_stakes(unit, table, player_id)
    if table.leave(player_id, coup is not None, reason):
        load_player(unit, player_id).give_up_seat(table.table_id)
    if coup is not None:
        choose_when_due(unit, settings, coup, now)
    return coup


def open_coup(unit: Unit, games: GameSettings, table: Table, shoe_prefix: list[str] | None) -> Coup:
    game = games.tables.game(table.game)
    if rules_of(table.game).player_banked:
        if table.banker is None:
            raise NoBank(f"nobody holds the bank at table {table.table_id}: put one up first")
        table.check_bank_fits()
    coup = Coup.open(
        table_id=table.table_id,
        variant=table.game,
        mode=table.mode,
        decks=game.decks,
        tie_pays=game.tie_pays,
        limits=(table.bet_min_cents, table.bet_max_cents),
        box=unit.sealing(),
        seed=draw_seed(),
        shoe_prefix=shoe_prefix,
        banker_id=table.banker,
        bank_cents=table.bank_cents,
        commission_basis_points=game.commission_basis_points,
    )
    coup.check_shoe()
    unit.add(coup)
    table.open_coup(coup.round_id)
    return coup


def place_bet(
    unit: Unit, coup: Coup, player_id: str, spot: str, amount_cents: int, now: datetime.datetime
) -> None:
    table = load_table(unit, coup.table)
    table.check_seated(player_id)
    coup.place_bet(rules_of(coup.variant), player_id, spot, amount_cents, table.seat_of(player_id))
    house = coup.banker_id is None  # American tables; a player's bank takes cash only
    surebet = house and is_surebet(chance_any_wins(coup.bets[player_id], coup.decks))
    wallet = wallet_at(unit, now, player_id, coup.mode)
    spot_cents = coup.bets[player_id][spot]  # the maximum stake bounds the spot's whole stake
    wallet.hold(coup.round_id, amount_cents, house=house, surebet=surebet, spot_cents=spot_cents)


def remove_bet(unit: Unit, coup: Coup, player_id: str, spot: str) -> None:
    amount = coup.remove_bet(rules_of(coup.variant), player_id, spot)
    load_wallet(unit, player_id, coup.mode).release(coup.round_id, amount)


def cancel_bets(unit: Unit, coup: Coup, player_id: str) -> None:
    """Take every stake of one player back before the deal."""
    amount = coup.cancel_bets(player_id)
    load_wallet(unit, player_id, coup.mode).release(coup.round_id, amount)


def deal(unit: Unit, settings: TableSettings, coup: Coup, now: datetime.datetime) -> None:
    """Play the coup until it is over, settling every player, or a choice is owed; a
    bet the bank does not cover goes back to its player's wallet (rules.md 2.3)."""
    table = load_table(unit, coup.table)
    rules = rules_of(coup.variant)
    order, absent = table.play_order(after=table.banker), set(table.leaving)
    for player_id, _, cents in coup.deal(rules, order, absent, _deadline(settings, now)):
        load_wallet(unit, player_id, coup.mode).release(coup.round_id, cents)
    _settle_if_over(unit, coup, table, now)


def choose(
    unit: Unit,
    settings: TableSettings,
    coup: Coup,
    player_id: str,
    action: str,
    now: datetime.datetime,
) -> None:
    table = load_table(unit, coup.table)
    rules, absent = rules_of(coup.variant), set(table.leaving)
    coup.choose(rules, player_id, action, now, absent, _deadline(settings, now))
    _settle_if_over(unit, coup, table, now)


def choose_when_due(
    unit: Unit, settings: TableSettings, coup: Coup, now: datetime.datetime
) -> bool:
    """Make the choice owed by the system if its deadline has passed, or its
    participant is away (rules.md 2.3, 4); says whether one was made."""
    table = load_table(unit, coup.table)
    pending, absent = coup.pending, set(table.leaving)
    if pending is None:
        return False
    overdue = datetime.datetime.fromisoformat(pending["deadline"]) <= now
    if not overdue and pending["player_id"] not in absent:
        return False
    coup.choose_by_system(rules_of(coup.variant), absent, _deadline(settings, now))
    _settle_if_over(unit, coup, table, now)
    return True


def end_idle(unit: Unit, coup: Coup, idle_since: datetime.datetime) -> bool:
    """Void a coup never dealt that has seen no action since `idle_since`, returning
    every stake (rules.md 4). A coup in play waits on its choices' deadlines instead."""
    if coup.status != OPEN or coup.modified_on > idle_since:
        return False
    coup.void("no action before the idle timeout")
    for player_id in coup.bets:
        load_wallet(unit, player_id, coup.mode).void_round(coup.round_id)
    table = load_table(unit, coup.table)
    if coup.banker_id is not None:
        bank_steps.after_coup(unit, table, coup)  # the bank unchanged, unless its banker left
    _end_coup(unit, coup, table)
    return True


def disconnect(
    unit: Unit, settings: TableSettings, player: Player, now: datetime.datetime
) -> list[dict[str, str]]:
    """At each table the player sits at: their bets stand and the coup goes on; the
    seat frees when it ends (at once without one); a choice they owe is made by the
    system at once (rules.md 4). Returns the coups that hold their stakes."""
    affected = []
    for table_id in list(player.table_seats):
        table = load_table(unit, table_id)
        coup = leave(unit, settings, table, player.player_id, now, "disconnected")
        if coup is not None:
            affected.append({"round_id": coup.round_id, "effect": "bets stand; the coup goes on"})
    return affected


def reconnect(unit: Unit, player: Player) -> None:
    """Back before the coup ends: the seat is kept."""
    for table_id in player.table_seats:
        load_table(unit, table_id).stay(player.player_id)


def _settle_if_over(unit: Unit, coup: Coup, table: Table, now: datetime.datetime) -> None:
    """Settle every player of a coup now over, in this one save; then the table moves on."""
    if coup.status != SETTLED_STATUS:
        return
    if coup.banker_id is not None:
        bank_steps.settle(unit, coup)
        bank_steps.after_coup(unit, table, coup)
    else:
        _settle_against_the_house(unit, coup, now)
    _end_coup(unit, coup, table)
    bank_steps.banco_settled(table, coup)


def _settle_against_the_house(unit: Unit, coup: Coup, now: datetime.datetime) -> None:
    """Each player's result posts against casino:bank (a bonus past its expiry by `now`
    ended first), and each gains a dealer point per dollar staked (rules.md 2.1: points
    move in baccarat against the house)."""
    nets = coup.nets()
    for player_id in sorted(coup.bets):
        wallet = wallet_at(unit, now, player_id, coup.mode)
        wagered = baccarat_wagered(coup.bets[player_id], coup.outcome)
        shares = wallet.settle(coup.round_id, nets[player_id], CASINO_BANK, wagered)
        if shares is not None:
            coup.record_bonus_share(player_id, shares.cash_cents, shares.bonus_cents)
        points = points_for_stake(coup.stake_of(player_id))
        wallet.change_points(points, "player", coup.round_id, "baccarat stake")


def _end_coup(unit: Unit, coup: Coup, table: Table) -> None:
    for player_id in table.end_coup(coup.round_id):
        load_player(unit, player_id).give_up_seat(table.table_id)


def _coup_holding_stakes(unit: Unit, table: Table, player_id: str) -> Coup | None:
    """The coup in play, if the player has a stake in it or holds its bank."""
    if table.round_id is None:
        return None
    coup = load_coup(unit, table.round_id)
    return coup if player_id == table.banker or coup.stake_of(player_id) else None


def _deadline(settings: TableSettings, now: datetime.datetime) -> str:
    return (now + datetime.timedelta(seconds=settings.decision_seconds)).isoformat()


def _check_limits(game: str, low: int, high: int, floor: int, ceiling: int) -> None:
    """A table's limits are whole dollars within the game's own, minimum first."""
    if not floor <= low <= high <= ceiling or low % CENTS_PER_DOLLAR or high % CENTS_PER_DOLLAR:
        raise InvalidLimits(
            f"a {game} table's limits are whole dollars, minimum first, within "
            f"{format_cents(floor)}-{format_cents(ceiling)}"
        )
