"""Each player's settled rounds, with the balance before and after (rules.md 4).

Fed by the wallets' settlement and commission events; the cards and stakes of a
round are read from the round itself when the history is shown.
"""

from __future__ import annotations

from typing import Any

from domain import wallet
from projections.balances import Owners
from projections.base import Cursor, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS round_results (
    position BIGINT PRIMARY KEY,
    player_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    round_id TEXT NOT NULL,
    at TEXT NOT NULL,
    net_cents BIGINT NOT NULL,
    commission_cents BIGINT NOT NULL,
    balance_before_cents BIGINT NOT NULL,
    balance_after_cents BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS round_results_by_player ON round_results (player_id, mode, position);
"""
# Each table with its primary key.
TABLES = {"round_results": ("position",)}
ROUNDS_MAX = 100


COLUMNS = ("position", "player_id", "mode", "round_id", "at", "net_cents", "commission_cents",
           "balance_before_cents", "balance_after_cents")  # fmt: skip


class GameHistory:
    def __init__(self, owners: Owners) -> None:
        self.owners = owners
        self.results: dict[tuple[str, str, str], list[Any]] = {}  # By player, mode, round.
        self.later_commissions: list[tuple[Any, ...]] = []

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in (wallet.ROUND_SETTLED, wallet.COMMISSION_CHARGED)

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic == wallet.ROUND_SETTLED:
            player_id, mode = self.owners.of(event)
            after = event.balance_after_cents
            self.results[(player_id, mode, event.round_id)] = [
                position, player_id, mode, event.round_id, event.timestamp.isoformat(),
                event.net_cents, 0, after - event.net_cents, after,
            ]  # fmt: skip
        elif topic == wallet.COMMISSION_CHARGED:
            self._charge(event, *self.owners.of(event))

    def _charge(self, event: Any, player_id: str, mode: str) -> None:
        cents, after = event.commission_cents, event.balance_after_cents
        result = self.results.get((player_id, mode, event.round_id))
        if result is None:  # Settled in an earlier batch.
            self.later_commissions.append((cents, cents, after, player_id, mode, event.round_id))
        else:
            result[5] -= cents
            result[6] = cents
            result[8] = after

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "round_results", COLUMNS, list(self.results.values()))
        if self.later_commissions:
            cursor.executemany(
                "UPDATE round_results SET net_cents = net_cents - ?, commission_cents = ?,"
                " balance_after_cents = ? WHERE player_id = ? AND mode = ? AND round_id = ?",
                self.later_commissions,
            )


def recent(cursor: Cursor, player_id: str, mode: str, limit: int) -> list[dict[str, Any]]:
    """The player's latest settled rounds, newest first, each with the time the round
    began (when it opened: projections/round_index.py)."""
    found = rows(
        cursor,
        "SELECT r.round_id, (SELECT i.started_at FROM round_index i WHERE i.round_id = r.round_id),"
        " r.at, r.net_cents, r.commission_cents,"
        " r.balance_before_cents, r.balance_after_cents FROM round_results r"
        " WHERE r.player_id = ? AND r.mode = ? ORDER BY r.position DESC LIMIT ?",
        (player_id, mode, min(limit, ROUNDS_MAX)),
    )
    keys = ("round_id", "started_at", "at", "net_cents", "commission_cents",
            "balance_before_cents", "balance_after_cents")  # fmt: skip
    return [dict(zip(keys, row, strict=True)) for row in found]
