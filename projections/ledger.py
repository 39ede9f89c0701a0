"""Each wallet's money movements, line by line (api.md, GET /v1/players/{id}/ledger).

An entry's id is the wallet event's version: stable, and increasing per wallet,
so a client pages with `after`.
"""

from __future__ import annotations

from typing import Any

from domain import wallet
from domain.ids import player_account
from projections.balances import Owners
from projections.base import Cursor, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger_entries (
    player_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    entry_id BIGINT NOT NULL,
    position BIGINT NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    balance_after_cents BIGINT NOT NULL,
    round_id TEXT,
    transaction_id TEXT,
    PRIMARY KEY (player_id, mode, entry_id)
);
"""
# Each table with its primary key.
TABLES = {"ledger_entries": ("player_id", "mode", "entry_id")}
COLUMNS = ("player_id", "mode", "entry_id", "position", "at", "kind", "amount_cents",
           "balance_after_cents", "round_id", "transaction_id")  # fmt: skip
KINDS = {
    wallet.DEPOSITED: "deposit",
    wallet.WITHDRAWN: "withdrawal",
    wallet.ROUND_SETTLED: "round_result",
    wallet.COMMISSION_CHARGED: "commission",
    # Bonus money become cash (rules.md 9): at the conversion, or as money held then
    # settles or is given back.
    wallet.BONUS_CONVERTED: "bonus_converted",
    wallet.BONUS_SETTLED: "bonus_converted",
    wallet.ENDED_BONUS_RELEASED: "bonus_converted",
}


class Ledger:
    def __init__(self, owners: Owners) -> None:
        self.owners = owners
        self.entries: list[tuple[Any, ...]] = []

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in KINDS

    def apply(self, event: Any, position: int) -> None:
        kind = KINDS.get(wallet.topic_of(event))
        if kind is None:
            return  # Holds and points move no money in or out of the balance.
        player_id, mode = self.owners.of(event)
        account = player_account(player_id)
        own = sum(cents for posted_to, cents in event.postings if posted_to == account)
        if kind == "bonus_converted" and not own:
            return  # the bonus alone moved: no line of the cash's ledger
        self.entries.append(
            (player_id, mode, event.originator_version, position, event.timestamp.isoformat(),
             kind, own, event.balance_after_cents, getattr(event, "round_id", None),
             getattr(event, "transaction_id", None))
        )  # fmt: skip

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "ledger_entries", COLUMNS, self.entries)


def entries(
    cursor: Cursor, player_id: str, mode: str, after: int, limit: int
) -> list[dict[str, Any]]:
    """Up to `limit` entries after entry `after`, oldest first."""
    found = rows(
        cursor,
        f"SELECT {', '.join(COLUMNS[2:])} FROM ledger_entries"
        " WHERE player_id = ? AND mode = ? AND entry_id > ? ORDER BY entry_id LIMIT ?",
        (player_id, mode, after, limit),
    )
    return [dict(zip(COLUMNS[2:], row, strict=True)) for row in found]
