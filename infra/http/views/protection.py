"""Player protection as the API shows it (rules.md 7)."""

from __future__ import annotations

import datetime
from typing import Any

from domain.money import format_cents
from domain.protection import LIMIT_KINDS, PERIODS, Protection
from domain.significant import stamp


def limits_view(
    player_id: str, protection: Protection | None, now: datetime.datetime
) -> dict[str, Any]:
    if protection is None:
        protection = Protection(player_id)  # never saved: no limit, no exclusion
    keys = [(kind, period) for kind in LIMIT_KINDS for period in PERIODS]
    in_effect: dict[str, dict[str, str | None]] = {kind: {} for kind in LIMIT_KINDS}
    for kind, period in keys:
        in_effect[kind][period] = _money(protection.limit_at(f"{kind}:{period}", now))
    return {
        "player_id": player_id,
        "mode": "real",
        "limits": in_effect,
        "pending": [
            waiting
            for kind, period in keys
            if (waiting := _pending(protection, kind, period, now)) is not None
        ],
        "windows": [
            _window(protection, kind, period, now)
            for kind, period in keys
            if protection.limit_at(f"{kind}:{period}", now) is not None
        ],
    }


def exclusions_view(
    player_id: str, protection: Protection | None, now: datetime.datetime
) -> dict[str, Any]:
    current = None
    if protection is not None and protection.excluded_until(now) is not None:
        current = protection.exclusion
    past = [] if protection is None else protection.past(now)
    return {"player_id": player_id, "current": current, "past": past}


def _pending(
    protection: Protection, kind: str, period: str, now: datetime.datetime
) -> dict[str, Any] | None:
    """The raise waiting on a limit, unless there is none or its cooling-off is over."""
    pending = protection.pending.get(f"{kind}:{period}")
    if pending is None or pending[1] <= stamp(now):
        return None
    return {
        "kind": kind,
        "period": period,
        "amount": _money(pending[0]),
        "effective_at": pending[1],
    }


def _window(protection: Protection, kind: str, period: str, now: datetime.datetime) -> Any:
    key = f"{kind}:{period}"
    limit = protection.limit_at(key, now)
    assert limit is not None
    used = protection.used_cents(key, now)
    resets = protection.resets_at(key, now)
    return {
        "kind": kind,
        "period": period,
        "used": format_cents(used),
        "remaining": format_cents(max(0, limit - used)),
        "resets_at": stamp(resets) if resets is not None else None,
    }


def _money(cents: int | None) -> str | None:
    return None if cents is None else format_cents(cents)
