"""The protection guard: every command's last step before its save (rules.md 7).

It reads what the command is about to save off the wallets' and players' pending
events, whatever the game or step that made them: deposits, stakes (a bet, a
double, a split, insurance, a banco), a P2P dealer's hold, a bank put up, sitting
down, dealing one's own house round. For each player who has a `Protection`, it
refuses what an exclusion or a limit forbids, and records the rest there, in the
same save. One place sees every stake, so no game's step can forget the check.
"""

from __future__ import annotations

import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from domain.errors import DomainError
from domain.player import Player
from domain.protection import Activity, find_protection
from domain.tables.coup import Coup
from domain.tables.punto_banco import HOUSE
from domain.unit import Unit
from domain.wallet import (
    BANK_HELD,
    BONUS_GRANTED,
    BONUS_HELD,
    COMMISSION_CHARGED,
    CREDITED,
    DEPOSITED,
    FUNDS_HELD,
    HOLD_RELEASED,
    ROUND_SETTLED,
    STAKE_TAKEN,
    Wallet,
    topic_of,
)

SITS = ("casino:Player.SatDown", "casino:Player.TookSeat")


def guard(unit: Unit, now: datetime.datetime) -> None:
    """Refuse the save (a domain error) or record it in each player's protection."""
    for activity in activities(unit.aggregates()).values():
        if not (activity.records or activity.plays or activity.exposure):
            continue
        if activity.unprotected:
            continue  # the wallet says the player has none: nothing to load
        protection = find_protection(unit, activity.player_id)
        if protection is None:
            continue
        protection.check(activity, now)
        protection.record(activity, now)


def dealing_problem(unit: Unit, dealer: Wallet, now: datetime.datetime) -> DomainError | None:
    """Why a P2P dealer may open no new round for a loss limit (rules.md 7), or None:
    what they have lost in a window, with what this save settles for them, has passed
    one. Asked before a round opens, so that a save settling the last round can still
    open none rather than be refused."""
    if dealer.mode != "real" or not dealer.protected:
        return None  # limits are real money's; the wallet says whether there are any
    protection = find_protection(unit, dealer.player_id)
    if protection is None:
        return None
    return protection.dealing_problem(activities(unit.aggregates()).get(dealer.player_id), now)


def activities(aggregates: list[Aggregate]) -> dict[str, Activity]:
    rounds = [a for a in aggregates if isinstance(a, Coup) and a.one_seat]
    dealers = {(a.round_id, a.banker_id) for a in rounds}
    # A house round settles only when its player deals it: that is playing too.
    dealt = {a.round_id for a in rounds if a.variant == HOUSE}
    found: dict[str, Activity] = {}
    for aggregate in aggregates:
        if isinstance(aggregate, Wallet) and aggregate.pending_events:
            activity = found.setdefault(aggregate.player_id, Activity(aggregate.player_id))
            activity.unprotected = not aggregate.protected
            real = aggregate.mode == "real"
            for pending in aggregate.pending_events:
                _read_wallet_event(activity, pending, real, dealers)
                _read_deal(activity, pending, dealt)
        elif isinstance(aggregate, Player) and _sits(aggregate):
            activity = found.setdefault(aggregate.player_id, Activity(aggregate.player_id))
            activity.plays, activity.where = True, "sit down at a table"
    return found


def _read_wallet_event(
    activity: Activity, pending: Any, real: bool, dealers: set[tuple[str, str | None]]
) -> None:
    topic = topic_of(pending)
    if topic == DEPOSITED:
        activity.plays, activity.where = True, "deposit"
        activity.deposit_cents += pending.amount_cents if real else 0
    elif topic == FUNDS_HELD and (pending.round_id, activity.player_id) in dealers:
        activity.exposure, activity.where = True, "deal"  # a P2P dealer's worst case
    elif topic == FUNDS_HELD:
        activity.plays, activity.where = True, "bet"
        if real:
            _add(activity.stakes, pending.round_id, pending.amount_cents)
    elif topic == BONUS_HELD:  # a bet all the same; limits count cash only (rules.md 9)
        activity.plays, activity.where = True, "bet"
    elif topic == BONUS_GRANTED:  # no bonus for an excluded player (rules.md 9)
        activity.plays, activity.where = True, "be granted a bonus"
    elif topic == STAKE_TAKEN:
        # A third-party game's stake is taken at once (rules.md 10): a bet, and lost
        # the moment it is made, so it is exposure and loss at once (never both).
        # Limits count its cash part only (rules.md 9).
        activity.plays, activity.where = True, "bet"
        if real:
            cash = pending.amount_cents - pending.bonus_cents
            _add(activity.stakes, pending.round_id, cash)
            _add(activity.settled, pending.round_id, cash)
    elif topic == BANK_HELD and pending.round_id is None:
        activity.exposure, activity.where = True, "put up a bank"
        activity.banks = activity.banks or real
    elif not real:
        return
    elif topic == HOLD_RELEASED:
        _add(activity.released, pending.round_id, pending.amount_cents)
    elif topic == ROUND_SETTLED:
        _add(activity.settled, pending.round_id, -pending.net_cents)
    elif topic == COMMISSION_CHARGED:
        _add(activity.settled, pending.round_id, pending.commission_cents)
    elif topic == CREDITED:  # a win, or a stake given back: never refused; its cash share
        _add(activity.settled, pending.round_id, pending.bonus_cents - pending.amount_cents)


def _read_deal(activity: Activity, pending: Any, dealt: set[str]) -> None:
    if topic_of(pending) == ROUND_SETTLED and pending.round_id in dealt:
        activity.plays, activity.where = True, "deal"


def _sits(player: Player) -> bool:
    return any(topic_of(pending) in SITS for pending in player.pending_events)


def _add(amounts: dict[str, int], key: str, cents: int) -> None:
    amounts[key] = amounts.get(key, 0) + cents
