"""Baccarat's steps: open a house round, place and remove bets, deal, end an idle round.

Every baccarat round (house or P2P) takes its bets and its deal here; each step
moves the round and the holds on the player's wallet in the same unit of work.
"""

from __future__ import annotations

import datetime

from domain.baccarat import p2p_steps
from domain.baccarat.round import HOUSE, OPEN, P2P, BaccaratRound
from domain.baccarat.settle import settle_house, settle_p2p, void_round
from domain.errors import NoBets
from domain.settings import GameSettings
from domain.shoe import draw_seed
from domain.unit import Unit
from domain.wallet import load_wallet


def open_house_round(
    unit: Unit, games: GameSettings, player_id: str, mode: str, shoe_prefix: list[str] | None
) -> BaccaratRound:
    house = games.house
    load_wallet(unit, player_id, mode)  # The player must exist.
    round_ = BaccaratRound.open(
        variant=HOUSE,
        mode=mode,
        player_id=player_id,
        limits=(house.stake_min_cents, house.stake_max_cents),
        decks=house.decks,
        tie_pays=house.tie_pays,
        box=unit.sealing(),
        seed=draw_seed(),
        shoe_prefix=shoe_prefix,
    )
    round_.check_shoe()
    unit.add(round_)
    return round_


def place_bet(unit: Unit, round_: BaccaratRound, spot: str, amount_cents: int) -> None:
    round_.place_bet(spot, amount_cents)
    load_wallet(unit, round_.player_id, round_.mode).hold(round_.round_id, amount_cents)


def remove_bet(unit: Unit, round_: BaccaratRound, spot: str) -> None:
    amount = round_.remove_bet(spot)
    load_wallet(unit, round_.player_id, round_.mode).release(round_.round_id, amount)


def cancel_bets(unit: Unit, round_: BaccaratRound) -> None:
    """Take every stake back before the deal."""
    if not round_.bets:
        raise NoBets("there are no bets to cancel")
    for spot in sorted(round_.bets):
        remove_bet(unit, round_, spot)


def deal(
    unit: Unit, games: GameSettings, round_: BaccaratRound, now: datetime.datetime
) -> BaccaratRound | None:
    """Play the whole coup and settle it; a P2P table then moves on to its next round,
    which is returned when auto-confirm opened one."""
    round_.deal()
    if round_.variant != P2P:
        settle_house(unit, round_)
        return None
    settle_p2p(unit, round_)
    return p2p_steps.end_round(unit, games.p2p, round_, now)


def end_idle(unit: Unit, round_: BaccaratRound, idle_since: datetime.datetime) -> bool:
    """Void a round still open with no action since `idle_since` (rules.md 4): every
    stake and the dealer's hold go back. A round acted on since is left alone."""
    if round_.status != OPEN or round_.modified_on > idle_since:
        return False
    void_round(unit, round_, "no action before the idle timeout")
    if round_.table_id is not None:
        p2p_steps.void_idle_round(unit, round_)
    return True
