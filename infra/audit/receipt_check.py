"""The receipts table against the seals (infra/store/receipts.py): each transaction's
receipts are exactly the ones its seal names, and a receipt still holding its answer
holds the answer it was given.

A receipt inserted, removed or changed behind the service's back (its row's key,
fingerprint, time or position; or, while it lives, its answer) shows here, named by
its seal's position. The seals' own signatures and chain are seal_check's. A store
whose seals name no receipts, and whose receipts are older than its seals, has only
the table's triggers to hold it.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from infra.audit.chain_check import Problems
from infra.commands.receipt_answers import DAY_SECONDS
from infra.store import receipts as receipt_rows
from infra.store import seal as seals
from infra.store.database import PostgresDatabase
from infra.store.schema import POSTGRES_EVENTS_TABLE, SQLITE_EVENTS_TABLE
from projections.base import POSITION_MAX, Database

WINDOW = 50_000  # log positions per pair of reads: memory stays bounded on any log
PAST_THE_END_NAMED_MAX = 100  # receipts named past the log's end: one shows it is tampered


@dataclass
class ReceiptReport:
    receipts: int = 0
    pruned: int = 0
    problems: Problems = field(default_factory=lambda: Problems("receipts"))


@dataclass(frozen=True)
class Retention:
    """How long answers are kept, and the audit's time: an answer recorded less than
    `days` before `now_ms` is one the pruner (infra/workers.py) leaves alone."""

    days: int
    now_ms: int

    def live(self, recorded_ms: int) -> bool:
        return recorded_ms > self.now_ms - self.days * DAY_SECONDS * 1000


def check_receipts(
    database: Database,
    up_to: int = POSITION_MAX,
    retention: Retention | None = None,
    after: int = 0,
) -> ReceiptReport:
    """Check every receipt recorded at a position after `after` up to `up_to`, a
    window at a time; with `retention`, that none lost its answer before its time."""
    report = ReceiptReport()
    with database.read() as cursor:
        cursor.execute(f"SELECT MIN(first_position), MAX(last_position) FROM {seals.TABLE}")
        first, last = cursor.fetchone() or (None, None)
        cursor.execute(f"SELECT MIN(position), MAX(position) FROM {receipt_rows.TABLE}")
        low, high = cursor.fetchone() or (None, None)
    sealing_began = None if first is None else int(first)
    top = min(up_to, max(int(high or 0), int(last or 0)))
    start = int(low) if low is not None else 1
    if sealing_began is not None:
        start = min(start, sealing_began)
    if after:  # an incremental verify: what came before was checked (below 1 too)
        start = max(start, after + 1)
    window_start = start
    while window_start <= top:
        window_end = min(top, window_start + WINDOW - 1)
        with database.read() as cursor:
            named, rows = _window(cursor, window_start, window_end)
            unsealed = _before_sealing(cursor, _event_position(database), rows, sealing_began)
            following = _next_receipt_position(cursor, window_end)
        _check_window(report, named, rows, unsealed, retention)
        window_start = top + 1 if following is None else following
    _check_past_the_end(database, report, up_to)
    return report


def _next_receipt_position(cursor: Any, after: int) -> int | None:
    """The first position after `after` where a seal names receipts or a receipt
    stands: the windows skip the stretches with neither. Positions may jump far
    ahead (an acknowledgment goes past a seal row forged at 10**12, say), and a
    window of each 50,000 on the way would take days."""
    cursor.execute(
        f"SELECT MIN(last_position) FROM {seals.TABLE}"
        " WHERE last_position > ? AND receipts_digest IS NOT NULL",
        (after,),
    )
    found = [row[0] for row in [cursor.fetchone()] if row and row[0] is not None]
    cursor.execute(f"SELECT MIN(position) FROM {receipt_rows.TABLE} WHERE position > ?", (after,))
    found += [row[0] for row in [cursor.fetchone()] if row and row[0] is not None]
    return min((int(position) for position in found), default=None)


def _check_past_the_end(database: Database, report: ReceiptReport, up_to: int) -> None:
    """Receipts recorded after `up_to` belong to saves newer than this audit, which
    the next one checks; but a save is at an event of the log, so one where none is
    was written behind the service's back (the service never answers from it)."""
    events, position = _event_position(database)
    with database.read() as cursor:
        cursor.execute(
            f"SELECT key_id, position FROM {receipt_rows.TABLE} WHERE position > ? AND NOT"
            f" EXISTS (SELECT 1 FROM {events} WHERE {position} = {receipt_rows.TABLE}.position)"
            f" ORDER BY position LIMIT {PAST_THE_END_NAMED_MAX}",
            (up_to,),
        )
        for key_id, at in cursor.fetchall():
            report.problems.add(
                f"the receipt {_name(key_id)} is recorded at position {at}, past the log's end:"
                " inserted behind the service's back"
            )


def _event_position(database: Database) -> tuple[str, str]:
    """The log's table, and its column of positions."""
    if isinstance(database, PostgresDatabase):
        return POSTGRES_EVENTS_TABLE, "notification_id"
    return SQLITE_EVENTS_TABLE, "rowid"


def _before_sealing(
    cursor: Any,
    log: tuple[str, str],
    rows: dict[int, list[Sequence[Any]]],
    sealing_began: int | None,
) -> set[int]:
    """The positions of `rows` recorded before the store sealed anything, at an event of
    the log (the triggers alone hold those); any other position needs a seal."""
    early = [p for p in rows if p >= 1 and (sealing_began is None or p < sealing_began)]
    if not early:
        return set()
    events, position = log
    marks = ", ".join("?" * len(early))
    cursor.execute(f"SELECT {position} FROM {events} WHERE {position} IN ({marks})", early)
    return {int(found) for (found,) in cursor.fetchall()}


def _window(
    cursor: Any, start: int, end: int
) -> tuple[dict[int, str], dict[int, list[Sequence[Any]]]]:
    """The receipts digests seals name, and the receipt rows, by position."""
    cursor.execute(
        f"SELECT last_position, receipts_digest FROM {seals.TABLE}"
        " WHERE last_position >= ? AND last_position <= ? AND receipts_digest IS NOT NULL",
        (start, end),
    )
    named = {int(position): str(digest) for position, digest in cursor.fetchall()}
    cursor.execute(
        f"SELECT {receipt_rows.INSERT_COLUMNS} FROM {receipt_rows.TABLE}"
        " WHERE position >= ? AND position <= ? ORDER BY position",
        (start, end),
    )
    rows: dict[int, list[Sequence[Any]]] = defaultdict(list)
    for row in cursor.fetchall():
        rows[int(row[-1])].append(row)
    return named, rows


def _check_window(
    report: ReceiptReport,
    named: dict[int, str],
    rows: dict[int, list[Sequence[Any]]],
    before_sealing: set[int],
    retention: Retention | None,
) -> None:
    for position in sorted(set(named) | set(rows)):
        found = rows.get(position, [])
        report.receipts += len(found)
        for row in found:
            _check_answer(report, row, retention)
        if position in before_sealing:
            continue  # Recorded before the store sealed anything: the triggers hold it.
        if _digest(found) != named.get(position):
            keys = ", ".join(_name(row[0]) for row in found) or "none"
            report.problems.add(
                f"the receipts recorded with the save ending at position {position} are not "
                f"the ones its seal names (receipts there now: {keys}): one was inserted, "
                "removed or changed behind the service's back"
            )


def _name(key_id: Any) -> str:
    """A receipt's key id as the report names it: the UUID, or what stands there."""
    try:
        return str(UUID(str(key_id)))
    except ValueError:
        return repr(key_id)


def _digest(found: list[Sequence[Any]]) -> str | None:
    """The digest of a save's receipts, as its seal would name it; a row with values no
    receipt of the service has gives one no seal names."""
    try:
        return receipt_rows.receipts_digest_of(found)
    except (TypeError, ValueError, OverflowError):
        return "not a receipt's values"


def _check_answer(report: ReceiptReport, row: Sequence[Any], retention: Retention | None) -> None:
    key_id, _, _, answer, answer_sha256, recorded_ms, position = row
    if answer is None:
        report.pruned += 1
        # The service's role may prune (set the answer to NULL), but the pruner does so
        # only once the key is refused as expired anyway; done before, it took the answer
        # from a caller who may still retry (pruned_ms, which the role writes, proves none).
        if retention is not None and retention.live(int(recorded_ms)):
            report.problems.add(
                f"the receipt {_name(key_id)} (the save ending at position {position}) was "
                f"pruned before its {retention.days} days had passed: not by the pruner"
            )
        return
    if hashlib.sha256(bytes(answer)).hexdigest() != answer_sha256:
        report.problems.add(
            f"the receipt {key_id} (the save ending at position {position}) holds an answer "
            "other than the one it was given: changed behind the service's back"
        )
