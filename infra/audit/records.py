"""Writing exported records: JSON lines, or CSV under a header (`casino audit export`).

A record's `data` is written as JSON (a JSON string in CSV), `redacted` as the
names withheld (space-separated in CSV), a missing value as an empty cell.
"""

from __future__ import annotations

import csv
import datetime
import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, TextIO
from uuid import UUID

COLUMNS = (
    "position",
    "aggregate_id",
    "version",
    "topic",
    "type",
    "timestamp",
    "data",
    "redacted",
    "sha256",
    "link",
)
LINES_PER_WRITE = 1000


def write(records: Iterable[dict[str, Any]], format_: str, out: TextIO) -> None:
    if format_ == "csv":
        write_csv(records, out)
    else:
        write_jsonl(records, out)


def write_jsonl(records: Iterable[dict[str, Any]], out: TextIO) -> None:
    lines: list[str] = []
    for record in records:
        lines.append(_json(record))
        if len(lines) == LINES_PER_WRITE:
            out.write("\n".join(lines) + "\n")
            lines.clear()
    if lines:
        out.write("\n".join(lines) + "\n")


def write_csv(records: Iterable[dict[str, Any]], out: TextIO) -> None:
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for record in records:
        writer.writerow(
            [
                record["position"],
                record["aggregate_id"],
                record["version"],
                record["topic"],
                record["type"],
                record["timestamp"],
                _json(record["data"]),
                " ".join(record["redacted"]),
                record["sha256"] or "",
                record["link"] or "",
            ]
        )


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, UUID | Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        return utc(value).isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"cannot export a {type(value).__name__}")


def utc(moment: datetime.datetime) -> datetime.datetime:
    """The moment in UTC (a naive one is taken to be UTC already)."""
    return (
        moment.replace(tzinfo=datetime.UTC)
        if moment.tzinfo is None
        else moment.astimezone(datetime.UTC)
    )
