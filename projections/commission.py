"""P2P commission per day and mode (api.md, GET /v1/reports/commission)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from domain import wallet
from projections.balances import Owners
from projections.base import Cursor, add_to_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS commission_daily (
    mode TEXT NOT NULL,
    day TEXT NOT NULL,
    commission_cents BIGINT NOT NULL,
    rounds BIGINT NOT NULL,
    PRIMARY KEY (mode, day)
);
"""
# Each table with its primary key.
TABLES = {"commission_daily": ("mode", "day")}


class Commission:
    def __init__(self, owners: Owners) -> None:
        self.owners = owners
        self.days: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0])

    @staticmethod
    def wants(topic: str) -> bool:
        return topic == wallet.COMMISSION_CHARGED

    def apply(self, event: Any, position: int) -> None:
        if wallet.topic_of(event) != wallet.COMMISSION_CHARGED:
            return
        _, mode = self.owners.of(event)
        day = self.days[(mode, event.timestamp.date().isoformat())]
        day[0] += event.commission_cents
        day[1] += 1

    def flush(self, cursor: Cursor) -> None:
        add_to_rows(
            cursor, "commission_daily", ("mode", "day"), ("commission_cents", "rounds"), self.days
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
