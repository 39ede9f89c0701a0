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
    round_ = store.app.round(round_id)
    lines = []
    events: list[Any] = list(store.app.events.get(round_.id))
    for event in events:
        data = event_data(event)
        if not secrets_revealed(round_.status):
            for secret in SECRET_FIELDS:  # Revealed only once the round is over.
                data.pop(secret, None)
        kind = type(event).TOPIC.rsplit(".", 1)[-1]
        details = ", ".join(f"{k}={v}" for k, v in data.items())
        at = f"{event.timestamp:%Y-%m-%d %H:%M:%S.%f}"
        lines.append(f"{event.originator_version:>3}  {at}  {kind:<17} {details}")
    return lines
