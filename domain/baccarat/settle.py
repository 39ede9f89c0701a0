"""How a one-seat baccarat round moves money when it ends: settled against the house or
between a P2P dealer and player, or voided with every stake returned.

Each step posts on the wallets in the same save as the coup's own events; the seam
checks that every save's postings sum to zero.
"""

from __future__ import annotations

import datetime

from domain.baccarat import rules
from domain.bonus import baccarat_wagered
from domain.bonus_steps import wallet_at
from domain.tables.coup import OPEN, Coup
from domain.unit import Unit
from domain.wallet import CASINO_BANK, load_wallet


def settle_house(unit: Unit, round_: Coup, now: datetime.datetime) -> None:
    """The casino is the bank: the player's result posts against casino:bank (a bonus
    past its expiry by `now` ended first)."""
    assert round_.player_id is not None
    wallet = wallet_at(unit, now, round_.player_id, round_.mode)
    wagered = baccarat_wagered(round_.bets.get(round_.player_id, {}), round_.outcome)
    shares = wallet.settle(round_.round_id, _player_net(round_), CASINO_BANK, wagered)
    if shares is not None:
        round_.record_bonus_share(round_.player_id, shares.cash_cents, shares.bonus_cents)
    award_player_points(unit, round_)


def settle_p2p(unit: Unit, round_: Coup) -> None:
    """The dealer pays winners and collects losers; then pays the casino's commission.

    Each side posts its own leg in this save; together they sum to zero.
    """
    assert round_.banker_id is not None and round_.player_id is not None
    player = load_wallet(unit, round_.player_id, round_.mode)
    dealer = load_wallet(unit, round_.banker_id, round_.mode)
    player.settle(round_.round_id, _player_net(round_), None)
    dealer.settle(round_.round_id, round_.banker_net_cents(), None)
    dealer.charge_commission(round_.round_id, round_.commission_cents)
    award_player_points(unit, round_)
    points = rules.points_for_stake(round_.total_stake_cents)
    dealer.change_points(-points, "dealer", round_.round_id, "baccarat stakes against the dealer")


def award_player_points(unit: Unit, round_: Coup) -> None:
    """A player gains one dealer point per dollar staked in any baccarat round."""
    assert round_.player_id is not None
    wallet = load_wallet(unit, round_.player_id, round_.mode)
    points = rules.points_for_stake(round_.total_stake_cents)
    wallet.change_points(points, "player", round_.round_id, "baccarat stake")


def void_round(unit: Unit, round_: Coup, reason: str) -> None:
    """Void an open round: every stake and the dealer's hold go back; no commission, no points."""
    if round_.status != OPEN:
        return
    round_.void(reason)
    for participant in (round_.player_id, round_.banker_id):
        if participant is None:
            continue
        load_wallet(unit, participant, round_.mode).void_round(round_.round_id)


def _player_net(round_: Coup) -> int:
    return -round_.banker_net_cents()
