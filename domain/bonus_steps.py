"""What the bonus commands do (rules.md 9): grant, forfeit, expire, and the forfeits of
an exclusion; each a significant event in the wallet's save."""

from __future__ import annotations

import datetime
from typing import Any

from domain.bonus import Grant
from domain.ids import new_id
from domain.protection_steps import record
from domain.unit import Unit
from domain.wallet import BONUS_CONVERTED as CONVERTED_TOPIC
from domain.wallet import Wallet, load_wallet, topic_of

BONUS_GRANTED = "bonus_granted"
BONUS_CONVERTED = "bonus_converted"
BONUS_FORFEITED = "bonus_forfeited"
BONUS_EXPIRED = "bonus_expired"
REAL = "real"


def grant(
    unit: Unit, now: datetime.datetime, cap: int, player_id: str, given: Grant, actor: str
) -> dict[str, Any]:
    wallet = load_wallet(unit, player_id, REAL)
    bonus_id = new_id()
    wallet.grant_bonus(bonus_id, given, cap, now)
    bonus = wallet.bonus(bonus_id)
    record(unit, now, BONUS_GRANTED, _details(player_id, bonus), actor)
    return {"player_id": player_id, **bonus}


def forfeit(
    unit: Unit, now: datetime.datetime, player_id: str, bonus_id: str, actor: str
) -> dict[str, Any]:
    wallet = load_wallet(unit, player_id, REAL)
    bonus = wallet.forfeit_bonus(bonus_id, f"forfeited by the {actor}")
    record(unit, now, BONUS_FORFEITED, _details(player_id, bonus), actor)
    return {"player_id": player_id, **bonus}


def expire(unit: Unit, now: datetime.datetime, player_id: str, bonus_id: str) -> bool:
    wallet = load_wallet(unit, player_id, REAL)
    if not wallet.expire_bonus(bonus_id, now):
        return False
    record(unit, now, BONUS_EXPIRED, _details(player_id, wallet.bonus(bonus_id)))
    return True


def wallet_at(unit: Unit, now: datetime.datetime, player_id: str, mode: str) -> Wallet:
    """The wallet a stake, a return or a settlement moves money in: every bonus of it
    whose expiry has come by `now` ends first, in this save, as the worker would have
    ended it (rules.md 9), so no command stakes or credits a bonus past its expiry."""
    wallet = load_wallet(unit, player_id, mode)
    for bonus_id in wallet.end_expired_bonuses(now):
        record(unit, now, BONUS_EXPIRED, _details(wallet.player_id, wallet.bonus(bonus_id)))
    return wallet


def forfeit_every_bonus(unit: Unit, now: datetime.datetime, player_id: str, kind: str) -> None:
    """A time-out or self-exclusion forfeits the active bonus and every waiting one."""
    wallet = load_wallet(unit, player_id, REAL)
    for bonus_id in wallet.forfeit_every_bonus(f"forfeited by a {kind}"):
        record(unit, now, BONUS_FORFEITED, _details(player_id, wallet.bonus(bonus_id)))


def record_conversions(unit: Unit, now: datetime.datetime) -> None:
    """A bonus converts in the save of the round that met its requirement, whatever the
    game: each conversion the save holds is recorded as a significant event beside it."""
    for aggregate in unit.aggregates():
        if not isinstance(aggregate, Wallet) or not aggregate.bonuses:
            continue
        for pending in aggregate.pending_events:
            if topic_of(pending) == CONVERTED_TOPIC:
                event: Any = pending
                bonus = aggregate.bonus(event.bonus_id)
                details = _details(aggregate.player_id, bonus)
                record(unit, now, BONUS_CONVERTED, details | {
                    "converted_cents": event.converted_cents,
                    "forfeited_cents": event.forfeited_cents,
                })  # fmt: skip


def _details(player_id: str, bonus: dict[str, Any]) -> dict[str, Any]:
    return {"player_id": player_id, "bonus_id": bonus["bonus_id"], "status": bonus["status"],
            "amount_cents": bonus["amount_cents"]}  # fmt: skip
