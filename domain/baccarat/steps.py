"""The one-seat baccarat rounds' steps: open a house round, place and remove bets,
deal, end an idle round. A house round is a coup at a one-seat table the house banks;
a P2P round a coup whose banker is the table's dealer (rules.md 2.1, 2.2).

Each step moves the coup and the holds on the player's wallet in the same unit of work.
"""

from __future__ import annotations

import datetime

from domain.baccarat import p2p_steps
from domain.baccarat.odds import chance_any_wins
from domain.baccarat.settle import settle_house, settle_p2p, void_round
from domain.bonus import is_surebet
from domain.bonus_steps import wallet_at
from domain.settings import GameSettings
from domain.shoe import draw_seed
from domain.tables.coup import OPEN, Coup
from domain.tables.games import rules_of
from domain.tables.punto_banco import HOUSE, P2P
from domain.unit import Unit
from domain.wallet import load_wallet


def open_house_round(
    unit: Unit, games: GameSettings, player_id: str, mode: str, shoe_prefix: list[str] | None
) -> Coup:
    house = games.house
    load_wallet(unit, player_id, mode)  # The player must exist.
    round_ = Coup.open(
        table_id=None,
        variant=HOUSE,
        mode=mode,
        player_id=player_id,
        limits=(house.stake_min_cents, house.stake_max_cents),
        decks=house.decks,
        tie_pays=house.tie_pays,
        banker_id=None,
        bank_cents=0,
        commission_basis_points=0,
        box=unit.sealing(),
        seed=draw_seed(),
        shoe_prefix=shoe_prefix,
    )
    round_.check_shoe()
    unit.add(round_)
    return round_


def place_bet(
    unit: Unit, round_: Coup, spot: str, amount_cents: int, now: datetime.datetime
) -> None:
    player_id = _player(round_)
    round_.place_bet(rules_of(round_.variant), player_id, spot, amount_cents)
    house = round_.variant != P2P  # bonus money is staked only where the house banks
    surebet = is_surebet(chance_any_wins(round_.bets[player_id], round_.decks))
    wallet = wallet_at(unit, now, player_id, round_.mode)
    spot_cents = round_.bets[player_id][spot]  # the maximum stake bounds the spot's whole stake
    wallet.hold(round_.round_id, amount_cents, house, house and surebet, spot_cents)


def remove_bet(unit: Unit, round_: Coup, spot: str) -> None:
    player_id = _player(round_)
    amount = round_.remove_bet(rules_of(round_.variant), player_id, spot)
    load_wallet(unit, player_id, round_.mode).release(round_.round_id, amount)


def cancel_bets(unit: Unit, round_: Coup) -> None:
    """Take every stake back before the deal."""
    player_id = _player(round_)
    amount = round_.cancel_bets(player_id)
    load_wallet(unit, player_id, round_.mode).release(round_.round_id, amount)


def deal(unit: Unit, games: GameSettings, round_: Coup, now: datetime.datetime) -> Coup | None:
    """Play the whole coup and settle it; a P2P table then moves on to its next round,
    which is returned when auto-confirm opened one."""
    player_id = _player(round_)
    # Punto banco owes no choice, so no deadline is ever set: `now` stands for one.
    round_.deal(rules_of(round_.variant), [player_id], set(), now.isoformat())
    if round_.variant != P2P:
        settle_house(unit, round_, now)
        return None
    settle_p2p(unit, round_)
    return p2p_steps.end_round(unit, games.p2p, round_, now)


def end_idle(unit: Unit, round_: Coup, idle_since: datetime.datetime) -> bool:
    """Void a round still open with no action since `idle_since` (rules.md 4): every
    stake and the dealer's hold go back. A round acted on since is left alone."""
    if round_.status != OPEN or round_.modified_on > idle_since:
        return False
    void_round(unit, round_, "no action before the idle timeout")
    if round_.table_id is not None:
        p2p_steps.void_idle_round(unit, round_)
    return True


def _player(round_: Coup) -> str:
    assert round_.player_id is not None, "a one-seat round has its player"
    return round_.player_id
