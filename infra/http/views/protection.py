"""Player protection as the API shows it (rules.md 7)."""

from __future__ import annotations

import datetime
from typing import Any

from domain.money import format_cents
from domain.protection import LIMIT_KINDS, PERIODS, Protection
from domain.significant import stamp


def protection_view(
    player_id: str, protection: Protection | None, now: datetime.datetime
) -> dict[str, Any]:
    keys = [f"{kind}:{period}" for kind in LIMIT_KINDS for period in PERIODS]
    if protection is None:
        protection = Protection(player_id)  # never saved: shows no limit and no exclusion
    excluded = protection.excluded_until(now) is not None
    return {
        "player_id": player_id,
        "limits": [_limit_view(protection, key, now) for key in keys],
        "exclusion": dict(protection.exclusion) if excluded and protection.exclusion else None,
    }


def _limit_view(protection: Protection, key: str, now: datetime.datetime) -> dict[str, Any]:
    limit = protection.limit_at(key, now)
    used = protection.used_cents(key, now)
    pending = protection.pending.get(key)
    resets = protection.resets_at(key, now)
    return {
        "limit": key,
        "amount": _money(limit),
        "used": format_cents(used),
        "left": None if limit is None else format_cents(max(0, limit - used)),
        "resets_at": stamp(resets) if resets is not None else None,
        "pending": None
        if pending is None or pending[1] <= stamp(now)
        else {"amount": _money(pending[0]), "effective_at": pending[1]},
    }


def _money(cents: int | None) -> str | None:
    return None if cents is None else format_cents(cents)
