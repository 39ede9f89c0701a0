"""Significant events (GLI-19 s2.8.8, rules.md 7), in log order, for operators and
auditors to list by time and kind."""

from __future__ import annotations

import json
from typing import Any

from projections.base import Cursor, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS significant_events (
    position BIGINT PRIMARY KEY,
    event_id TEXT NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS significant_events_at ON significant_events (at);
"""
# Each table with its primary key.
TABLES = {"significant_events": ("position",)}
RECORDED = "casino:SignificantEvent.Recorded"
PAGE_MAX = 500


class SignificantEvents:
    def __init__(self) -> None:
        self.rows: list[tuple[int, str, str, str, str, str]] = []

    @staticmethod
    def wants(topic: str) -> bool:
        return topic == RECORDED

    def apply(self, event: Any, position: int) -> None:
        if str(getattr(type(event), "TOPIC", "")) == RECORDED:
            details = json.dumps(event.details, sort_keys=True)
            row = (position, event.event_id, event.at, event.kind, event.actor, details)
            self.rows.append(row)

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "significant_events", None, self.rows)


def listed(
    cursor: Cursor,
    since: str | None,
    until: str | None,
    kind: str | None,
    after: int,
    limit: int,
) -> list[dict[str, Any]]:
    """A page of significant events at or after `since` and before `until`, of one
    kind or any, oldest first, after a position."""
    assert 0 < limit <= PAGE_MAX
    sql = (
        "SELECT position, event_id, at, kind, actor, detail FROM significant_events"
        " WHERE position > ?"
    )
    params: list[Any] = [after]
    for clause, value in (("at >= ?", since), ("at < ?", until), ("kind = ?", kind)):
        if value is not None:
            sql, params = f"{sql} AND {clause}", [*params, value]
    found = rows(cursor, f"{sql} ORDER BY position LIMIT ?", [*params, limit])
    return [
        {"position": int(p), "event_id": e, "at": a, "kind": k, "actor": r, "detail": json.loads(d)}
        for p, e, a, k, r, d in found
    ]
