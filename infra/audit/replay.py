"""`casino audit replay`: one round's timeline, event by event, for a person to read.

Its secrets (seed, certification shoe, hole card) are left out until it is over.
"""

from __future__ import annotations

from typing import Any

from domain.rounds import SECRET_FIELDS, secrets_revealed
from infra.store.store import Store
from projections.round_trail import event_data


def timeline(store: Store, round_id: str) -> list[str]:
    """One round, event by event, for a person to read."""
    lines = []
    for record in timeline_records(store, round_id):
        details = ", ".join(f"{k}={v}" for k, v in record["data"].items())
        at = f"{record['timestamp']:%Y-%m-%d %H:%M:%S.%f}"
        lines.append(f"{record['version']:>3}  {at}  {record['type']:<17} {details}")
    return lines


def timeline_records(store: Store, round_id: str) -> list[dict[str, Any]]:
    """One round, event by event: version, timestamp, type and data (`--json`)."""
    round_ = store.app.round(round_id)
    records = []
    events: list[Any] = list(store.app.events.get(round_.id))
    for event in events:
        data = event_data(event)
        if not secrets_revealed(round_.status):
            for secret in SECRET_FIELDS:  # Revealed only once the round is over.
                data.pop(secret, None)
        records.append(
            {
                "version": event.originator_version,
                "timestamp": event.timestamp,
                "type": type(event).TOPIC.rsplit(".", 1)[-1],
                "data": data,
            }
        )
    return records
