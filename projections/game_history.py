"""Each player's settled rounds, with the balance before and after (rules.md 4).

Fed by the wallets' settlement and commission events; the cards and stakes of a
round are read from the round itself when the history is shown.
"""

from __future__ import annotations

from typing import Any

from domain import wallet
from domain.ids import player_account
from domain.providers import round as provider_round
from projections.balances import Owners
from projections.base import Cursor, chunks, delete_rows, insert_rows, rows

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
CREATE TABLE IF NOT EXISTS round_results_external (
    round_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    net_cents BIGINT NOT NULL,
    balance_before_cents BIGINT NOT NULL,
    balance_after_cents BIGINT NOT NULL,
    position BIGINT
);
"""
# Each table with its primary key.
TABLES = {"round_results": ("position",), "round_results_external": ("round_id",)}
# A provider's round (rules.md 10): its wallet's calls add up while it runs, in
# round_results_external; its end makes its row of round_results (`position` then
# says which), and a win that comes after it (a round ended for want of calls) is
# added to that row.
EXTERNAL = ("round_id", "player_id", "mode", "net_cents", "balance_before_cents",
            "balance_after_cents", "position")  # fmt: skip
ROUNDS_MAX = 100


COLUMNS = ("position", "player_id", "mode", "round_id", "at", "net_cents", "commission_cents",
           "balance_before_cents", "balance_after_cents")  # fmt: skip


class GameHistory:
    def __init__(self, owners: Owners) -> None:
        self.owners = owners
        self.results: dict[tuple[str, str, str], list[Any]] = {}  # By player, mode, round.
        self.later_commissions: list[tuple[Any, ...]] = []
        self.external: list[tuple[Any, int, tuple[str, str] | None]] = []  # providers' rounds

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in (wallet.ROUND_SETTLED, wallet.COMMISSION_CHARGED, wallet.STAKE_TAKEN,
                         wallet.CREDITED, provider_round.ENDED)  # fmt: skip

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic in (wallet.STAKE_TAKEN, wallet.CREDITED):
            self.external.append((event, position, self.owners.of(event)))
        elif topic == provider_round.ENDED:
            self.external.append((event, position, None))
        elif topic == wallet.ROUND_SETTLED:
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
        if self.external:
            _external(cursor, self.external, self.results)
        insert_rows(cursor, "round_results", COLUMNS, list(self.results.values()))
        if self.later_commissions:
            cursor.executemany(
                "UPDATE round_results SET net_cents = net_cents - ?, commission_cents = ?,"
                " balance_after_cents = ? WHERE player_id = ? AND mode = ? AND round_id = ?",
                self.later_commissions,
            )


def _external(
    cursor: Cursor,
    events: list[tuple[Any, int, tuple[str, str] | None]],
    results: dict[tuple[str, str, str], list[Any]],
) -> None:
    """Providers' rounds: their calls added up, a row of round_results at their end, a
    late win added to it."""
    kept = _kept(cursor, {e.round_id if owner else str(e.originator_id) for e, _, owner in events})
    late: list[tuple[Any, ...]] = []
    for event, position, owner in events:
        if owner is None:  # the round's end: its row of the history, once
            found = kept.get(str(event.originator_id))
            if found is not None and found[6] is None:
                found[6] = position
                results[(found[1], found[2], found[0])] = [
                    position, found[1], found[2], found[0], event.timestamp.isoformat(),
                    found[3], 0, found[4], found[5],
                ]  # fmt: skip
        else:
            late += _called(kept, results, event, owner)
    delete_rows(cursor, "round_results_external", "round_id", list(kept))
    insert_rows(cursor, "round_results_external", EXTERNAL, [tuple(k) for k in kept.values()])
    for change, after, position in late:
        cursor.execute(
            "UPDATE round_results SET net_cents = net_cents + ?, balance_after_cents = ?"
            " WHERE position = ?",
            (change, after, position),
        )


def _kept(cursor: Cursor, round_ids: set[str]) -> dict[str, list[Any]]:
    """The providers' rounds' sums so far, as EXTERNAL."""
    kept: dict[str, list[Any]] = {}
    for chunk in chunks(sorted(round_ids)):
        marks = ", ".join("?" * len(chunk))
        for row in rows(cursor, f"SELECT {', '.join(EXTERNAL)} FROM round_results_external"
                        f" WHERE round_id IN ({marks})", chunk):  # fmt: skip
            kept[str(row[0])] = [row[0], row[1], row[2], *(int(n) for n in row[3:6]), row[6]]
    return kept


def _called(
    kept: dict[str, list[Any]],
    results: dict[tuple[str, str, str], list[Any]],
    event: Any,
    owner: tuple[str, str],
) -> list[tuple[int, int, int]]:
    """A stake taken or a credit for a provider's round, added to its sums; after its
    end (a late win), to its row: in this batch's results, or returned to update."""
    account = player_account(owner[0])  # the cash's change: bonus money moves beside it
    change = sum(cents for posted_to, cents in event.postings if posted_to == account)
    after = event.balance_after_cents
    found = kept.setdefault(
        event.round_id, [event.round_id, *owner, 0, after - change, after, None]
    )
    found[3] += change
    found[5] = after
    if found[6] is None:
        return []
    shown = results.get((found[1], found[2], found[0]))
    if shown is None:
        return [(change, after, found[6])]
    shown[5], shown[8] = shown[5] + change, after
    return []


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
