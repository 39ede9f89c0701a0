"""Providers' rounds and every call they made (rules.md 10): the daily reconciliation
(api.md, GET /v1/providers/{id}/transactions) and the rounds still open, with their
last call, for the worker that ends those left without one
(CASINO_PROVIDER_ROUND_SECONDS).

A round's calls name only the round: who played it, for which provider and under
which of its ids, is read from its row here (made by its `Created`, perhaps in an
earlier batch).
"""

from __future__ import annotations

import csv
import datetime
import io
from dataclasses import dataclass
from typing import Any

from domain.money import format_cents
from domain.providers import round as provider_round
from domain.wallet import topic_of
from projections.base import Cursor, chunks, insert_rows, rows, set_text_columns

SCHEMA = """
CREATE TABLE IF NOT EXISTS provider_rounds (
    round_id TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    round_ref TEXT NOT NULL,
    status TEXT NOT NULL,
    last_call_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS provider_rounds_open ON provider_rounds (status, last_call_at);
CREATE TABLE IF NOT EXISTS provider_transactions (
    position BIGINT PRIMARY KEY,
    provider_id TEXT NOT NULL,
    day TEXT NOT NULL,
    transaction_id TEXT,
    kind TEXT NOT NULL,
    round_ref TEXT,
    player_id TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    at TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS provider_transactions_by_day
    ON provider_transactions (provider_id, day, position);
CREATE INDEX IF NOT EXISTS provider_transactions_by_id
    ON provider_transactions (provider_id, transaction_id);
"""
# Each table with its primary key.
TABLES = {"provider_rounds": ("round_id",), "provider_transactions": ("position",)}
ROUND_COLUMNS = ("round_id", "provider_id", "player_id", "round_ref", "status", "last_call_at")
COLUMNS = ("position", "provider_id", "day", "transaction_id", "kind", "round_ref", "player_id",
           "amount_cents", "at", "status")  # fmt: skip
PAGE_MAX = 1_000
OK, ROLLED_BACK, TOMBSTONE = "ok", "rolled_back", "tombstone"
KINDS = {
    provider_round.BET_TAKEN: "bet",
    provider_round.WIN_PAID: "win",
    provider_round.BET_ROLLED_BACK: "rollback",
}


class ProviderTransactions:
    def __init__(self) -> None:
        self.rounds: dict[str, list[str]] = {}  # round id -> its row, as ROUND_COLUMNS
        self.new_rounds: set[str] = set()
        self.events: list[tuple[Any, int]] = []

    @staticmethod
    def wants(topic: str) -> bool:
        return topic.startswith(provider_round.ROUND + ".") or topic == provider_round.BET_RECORDED

    def apply(self, event: Any, position: int) -> None:
        if topic_of(event) == provider_round.OPENED:
            round_id = str(event.originator_id)
            self.rounds[round_id] = [round_id, event.provider_id, event.player_id,
                                     event.round_ref, provider_round.OPEN, event.at]  # fmt: skip
            self.new_rounds.add(round_id)
        else:
            self.events.append((event, position))

    def flush(self, cursor: Cursor) -> None:
        wanted = {str(e.originator_id) for e, _ in self.events if _round_event(e)}
        self._load(cursor, wanted - self.rounds.keys())
        calls: list[tuple[Any, ...]] = []
        rolled_back: list[tuple[str, str]] = []
        for event, position in self.events:
            self._follow(event, position, calls, rolled_back)
        insert_rows(cursor, "provider_transactions", COLUMNS, calls)
        for provider_id, transaction_id in rolled_back:
            cursor.execute(
                "UPDATE provider_transactions SET status = ?"
                " WHERE provider_id = ? AND transaction_id = ? AND kind = 'bet'",
                (ROLLED_BACK, provider_id, transaction_id),
            )
        new = [r for i, r in self.rounds.items() if i in self.new_rounds]
        insert_rows(cursor, "provider_rounds", ROUND_COLUMNS, new)
        old = [(i, r[4], r[5]) for i, r in self.rounds.items() if i not in self.new_rounds]
        set_text_columns(cursor, "provider_rounds", "round_id", ("status", "last_call_at"), old)

    def _follow(
        self,
        event: Any,
        position: int,
        calls: list[tuple[Any, ...]],
        rolled_back: list[tuple[str, str]],
    ) -> None:
        topic = topic_of(event)
        if topic == provider_round.BET_RECORDED:
            if event.round_id is None:  # a rollback before its bet: the tombstone
                at = event.timestamp.isoformat()
                calls.append((position, event.provider_id, at[:10], event.rolled_back_by,
                              "rollback", None, event.player_id, 0, at, TOMBSTONE))  # fmt: skip
            return
        round_ = self.rounds[str(event.originator_id)]
        _, provider_id, player_id, round_ref, _, last_call_at = round_
        if topic == provider_round.ENDED:
            round_[4] = provider_round.CLOSED
            if event.reason == provider_round.BY_PROVIDER:
                calls.append((position, provider_id, event.at[:10], None, "end_round",
                              round_ref, player_id, 0, event.at, OK))  # fmt: skip
            return
        round_[5] = max(last_call_at, event.at)
        calls.append((position, provider_id, event.at[:10], event.transaction_id, KINDS[topic],
                      round_ref, player_id, event.amount_cents, event.at, OK))  # fmt: skip
        if topic == provider_round.BET_ROLLED_BACK:
            rolled_back.append((provider_id, event.bet_transaction_id))

    def _load(self, cursor: Cursor, round_ids: set[str]) -> None:
        for chunk in chunks(sorted(round_ids)):
            for row in rows(
                cursor,
                f"SELECT {', '.join(ROUND_COLUMNS)} FROM provider_rounds"
                f" WHERE round_id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ):
                self.rounds[str(row[0])] = [str(value) for value in row]
        missing = round_ids - self.rounds.keys()
        assert not missing, f"provider rounds with calls but never opened: {sorted(missing)[:5]}"


def _round_event(event: Any) -> bool:
    return topic_of(event).startswith(provider_round.ROUND + ".")


# The reads.


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    next_after: int | None

    def answer(self, provider_id: str) -> dict[str, Any]:
        return {
            "provider_id": provider_id,
            "transactions": self.rows,
            "next_after": self.next_after,
        }


def page(
    cursor: Cursor,
    provider_id: str,
    first_day: datetime.date,
    last_day: datetime.date,
    after: int,
    limit: int,
) -> Page:
    """A page of the provider's calls on those days (UTC), oldest first, after a position."""
    assert 0 < limit <= PAGE_MAX
    found = list(
        rows(
            cursor,
            "SELECT position, transaction_id, kind, round_ref, player_id, amount_cents, at, status"
            " FROM provider_transactions WHERE provider_id = ? AND day >= ? AND day <= ?"
            " AND position > ? ORDER BY position LIMIT ?",
            (provider_id, first_day.isoformat(), last_day.isoformat(), after, limit + 1),
        )
    )
    shown = [
        {"transaction_id": t, "kind": k, "round_id": r, "player_id": p,
         "amount": format_cents(int(c)), "at": a, "status": s}
        for _, t, k, r, p, c, a, s in found[:limit]
    ]  # fmt: skip
    more = len(found) > limit
    return Page(shown, int(found[limit - 1][0]) if more else None)


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV
# injection"); the ids a provider chose may start so.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PROVIDER_CHOSEN = ("transaction_id", "round_id")


def csv_text(found: list[dict[str, Any]]) -> str:
    """The transactions as CSV; an id the provider chose that a spreadsheet would run
    as a formula is written with a leading `'`, which shows it as text."""
    out = io.StringIO()
    fields = ("transaction_id", "kind", "round_id", "player_id", "amount", "at", "status")
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows([{**row, **_as_text(row)} for row in found])
    return out.getvalue()


def _as_text(row: dict[str, Any]) -> dict[str, str]:
    return {
        field: "'" + row[field]
        for field in PROVIDER_CHOSEN
        if str(row[field]).startswith(FORMULA_STARTS)
    }


def idle_rounds(cursor: Cursor, before: str, limit: int) -> list[str]:
    """Open rounds whose last call was before `before` (ISO), the oldest first."""
    found = rows(
        cursor,
        "SELECT round_id FROM provider_rounds WHERE status = ? AND last_call_at < ?"
        " ORDER BY last_call_at LIMIT ?",
        (provider_round.OPEN, before, limit),
    )
    return [str(row[0]) for row in found]
