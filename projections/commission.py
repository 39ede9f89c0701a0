"""P2P commission per day and mode (API.md, GET /v1/reports/commission)."""

from __future__ import annotations

from typing import Any

from domain import wallet
from projections.balances import wallet_owner
from projections.base import Cursor, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS commission_daily (
    mode TEXT NOT NULL,
    day TEXT NOT NULL,
    commission_cents BIGINT NOT NULL,
    rounds BIGINT NOT NULL,
    PRIMARY KEY (mode, day)
);
"""
TABLES = ("commission_daily",)


def apply(cursor: Cursor, event: Any) -> None:
    if wallet.topic_of(event) != wallet.COMMISSION_CHARGED:
        return
    _, mode = wallet_owner(cursor, str(event.originator_id))
    cursor.execute(
        "INSERT INTO commission_daily (mode, day, commission_cents, rounds) VALUES (?, ?, ?, 1)"
        " ON CONFLICT (mode, day) DO UPDATE SET"
        " commission_cents = commission_daily.commission_cents + excluded.commission_cents,"
        " rounds = commission_daily.rounds + 1",
        (mode, event.timestamp.date().isoformat(), event.commission_cents),
    )


def per_day(cursor: Cursor, mode: str, first_day: str, last_day: str) -> list[tuple[str, int, int]]:
    """(day, commission in cents, rounds) for each day with commission, oldest first."""
    found = rows(
        cursor,
        "SELECT day, commission_cents, rounds FROM commission_daily"
        " WHERE mode = ? AND day >= ? AND day <= ? ORDER BY day",
        (mode, first_day, last_day),
    )
    return [(str(day), int(cents), int(count)) for day, cents, count in found]
