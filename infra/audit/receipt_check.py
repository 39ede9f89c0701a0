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
from infra.store import receipts as receipt_rows
from infra.store import seal as seals
from projections.base import POSITION_MAX, Database

WINDOW = 50_000  # log positions per pair of reads: memory stays bounded on any log


@dataclass
class ReceiptReport:
    receipts: int = 0
    pruned: int = 0
    problems: Problems = field(default_factory=lambda: Problems("receipts"))


def check_receipts(database: Database, up_to: int = POSITION_MAX) -> ReceiptReport:
    """Check every receipt recorded at a position up to `up_to`, a window at a time."""
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
    for window_start in range(start, top + 1, WINDOW):
        window_end = min(top, window_start + WINDOW - 1)
        with database.read() as cursor:
            named, rows = _window(cursor, window_start, window_end)
        _check_window(report, named, rows, sealing_began)
    return report


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
    sealing_began: int | None,
) -> None:
    for position in sorted(set(named) | set(rows)):
        found = rows.get(position, [])
        report.receipts += len(found)
        for row in found:
            _check_answer(report, row)
        if sealing_began is None or position < sealing_began:
            continue  # Recorded before the store sealed anything: the triggers hold it.
        digest = receipt_rows.receipts_digest(receipt_rows.lines_of(found)) if found else None
        if digest != named.get(position):
            keys = ", ".join(str(UUID(str(row[0]))) for row in found) or "none"
            report.problems.add(
                f"the receipts recorded with the save ending at position {position} are not "
                f"the ones its seal names (receipts there now: {keys}): one was inserted, "
                "removed or changed behind the service's back"
            )


def _check_answer(report: ReceiptReport, row: Sequence[Any]) -> None:
    key_id, _, _, answer, answer_sha256, _, position = row
    if answer is None:
        report.pruned += 1
        return
    if hashlib.sha256(bytes(answer)).hexdigest() != answer_sha256:
        report.problems.add(
            f"the receipt {key_id} (the save ending at position {position}) holds an answer "
            "other than the one it was given: changed behind the service's back"
        )
