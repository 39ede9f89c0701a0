"""Choices owed in coups at tables, with their deadlines: what the choice worker looks
through to make them by the system once due (rules.md 2.3, 4).

Only candidates: the command that makes a choice re-checks the coup itself.
"""

from __future__ import annotations

from typing import Any

from domain.tables import coup
from projections.base import Cursor, delete_rows, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_choices (
    round_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    deadline TEXT NOT NULL
);
"""
# Each table with its primary key.
TABLES = {"pending_choices": ("round_id",)}
_OVER = (coup.DECISION_MADE, coup.SETTLED, coup.VOIDED)


class PendingChoices:
    def __init__(self) -> None:
        self.latest: dict[str, tuple[str, str] | None] = {}  # owed by, deadline; None: made

    @staticmethod
    def wants(topic: str) -> bool:
        return topic == coup.DECISION_OWED or topic in _OVER

    def apply(self, event: Any, position: int) -> None:
        topic = str(getattr(type(event), "TOPIC", ""))
        if topic == coup.DECISION_OWED:
            self.latest[str(event.originator_id)] = (event.player_id, event.deadline)
        elif topic in _OVER:
            self.latest[str(event.originator_id)] = None

    def flush(self, cursor: Cursor) -> None:
        if self.latest:
            delete_rows(cursor, "pending_choices", "round_id", sorted(self.latest))
        insert_rows(
            cursor,
            "pending_choices",
            ("round_id", "player_id", "deadline"),
            [(r, *owed) for r, owed in self.latest.items() if owed is not None],
        )


def due_by(cursor: Cursor, now_iso: str) -> list[str]:
    """Coups whose choice's deadline is at or before `now`, most overdue first."""
    found = rows(
        cursor,
        "SELECT round_id FROM pending_choices WHERE deadline <= ? ORDER BY deadline",
        (now_iso,),
    )
    return [str(row[0]) for row in found]
