"""The steps of player protection (rules.md 7) and of significant events (GLI-19
s2.8.8): what the application's commands for them do, each given the clock's reading.

Every significant event is an aggregate of one event, added to the command's unit, so it
is saved (and sealed) with what it records.
"""

from __future__ import annotations

import datetime
from typing import Any

from domain.ids import new_id
from domain.player import Player, load_player
from domain.protection import Protection, find_protection, protection_of
from domain.significant import (
    CONFIGURATION_CHANGED,
    EXCLUSION_ENDED,
    LIMIT_CHANGED,
    PLAYER_EXCLUDED,
    POINTS_ADJUSTED,
    Configuration,
    SignificantEvent,
    configuration_uuid,
    significant,
    stamp,
)
from domain.unit import Unit
from domain.wallet import Wallet, load_wallet


def record(
    unit: Unit, now: datetime.datetime, kind: str, details: dict[str, Any], actor: str = "system"
) -> SignificantEvent:
    recorded = significant(new_id(), kind, stamp(now), actor, details)
    unit.add(recorded)
    return recorded


def adjust_points(
    unit: Unit,
    now: datetime.datetime,
    player_id: str,
    mode: str,
    change: int,
    reason: str,
    actor: str,
) -> Wallet:
    wallet = load_wallet(unit, player_id, mode)
    wallet.adjust_points(change, reason)
    details = {"player_id": player_id, "mode": mode, "change": change, "reason": reason}
    record(unit, now, POINTS_ADJUSTED, details, actor)
    return wallet


def set_limits(
    unit: Unit,
    now: datetime.datetime,
    player_id: str,
    changes: dict[str, int | None],
    actor: str,
) -> tuple[Protection, dict[str, str]]:
    load_player(unit, player_id)
    protection = protection_of(unit, player_id)
    effective = {key: protection.set_limit(key, cents, now) for key, cents in changes.items()}
    details = {
        "player_id": player_id,
        "limits": {key: {"cents": cents, "effective_at": effective[key]}
                   for key, cents in changes.items()},
    }  # fmt: skip
    record(unit, now, LIMIT_CHANGED, details, actor)
    return protection, effective


def exclude(
    unit: Unit, now: datetime.datetime, player_id: str, kind: str, length: int, actor: str
) -> tuple[dict[str, str], Player]:
    """The exclusion begun, and the player whose open rounds it ends."""
    player = load_player(unit, player_id)
    exclusion = protection_of(unit, player_id).exclude(kind, length, now)
    record(unit, now, PLAYER_EXCLUDED, {"player_id": player_id, **exclusion}, actor)
    return exclusion, player


def end_exclusion(unit: Unit, now: datetime.datetime, player_id: str) -> bool:
    protection = find_protection(unit, player_id)
    if protection is None or protection.exclusion is None:
        return False
    ended = dict(protection.exclusion)
    if not protection.end_exclusion(now):
        return False
    record(unit, now, EXCLUSION_ENDED, {"player_id": player_id, **ended})
    return True


def see_configuration(
    unit: Unit, now: datetime.datetime, values: dict[str, str]
) -> dict[str, dict[str, str | None]]:
    seen = unit.find(Configuration, configuration_uuid())
    if seen is None:
        seen = Configuration()
        unit.add(seen)
    changed = seen.see(values)
    if changed:
        record(unit, now, CONFIGURATION_CHANGED, {"changed": changed})
    return changed
