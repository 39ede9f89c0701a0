"""Whether the log's head is as the service left it: what readiness and the store
watch ask every second (rules.md 5, 8).

The same three refusals a save meets (infra/store/recorders.py, and schema.py's
expect_log_top), asked without saving: the seals or the chain reach past the last
event (a tail cut), the last seal is not signed by the service's key (a seal
inserted behind its back), or events lie past the last seal (events inserted
behind its back). One statement, so one snapshot: a save commits its events and
their seal together, and a reader sees both or neither, never a false alarm.

The read takes a connection of the event store's own pool, the one commands save
through: a pool that gives none in time makes readiness fail as commands would.
"""

from __future__ import annotations

from typing import Any

import psycopg.rows

from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.recorders import ChainingSQLiteRecorder, SingleTripRecorder, trusted_head
from infra.store.schema import log_table
from infra.store.store import Store

_HEAD = (
    "SELECT (SELECT COALESCE(MAX({position}), 0) FROM {events}) AS top,"
    f" (SELECT COALESCE(MAX(position), 0) FROM {event_chain.TABLE}) AS reach,"
    f" {', '.join(f's.{c.strip()}' for c in seals.COLUMNS.split(','))}"
    f" FROM (SELECT 1) AS one LEFT JOIN (SELECT * FROM {seals.TABLE}"
    " ORDER BY last_position DESC LIMIT 1) AS s ON true"
)


def head_problem(store: Store) -> str | None:
    """Why the service must not save on top of the log (it was changed behind its
    back), or None. A store that seals nothing is taken as it is."""
    recorder = store.app.recorder
    sealer = getattr(recorder, "sealer", None)
    if sealer is None:
        return None
    top, reach, seal_row = _read_head(store)
    seal_last = 0 if seal_row is None else int(seal_row[0])
    if max(reach, seal_last) > top:
        return (
            f"the log reaches position {max(reach, seal_last)} in its chain or seals but its "
            f"last event is at {top}: events were removed from the end"
        )
    try:
        trusted_head(sealer, seal_row)
    except (seals.LogTampered, seals.SealKeyRetired) as refused:
        return str(refused)
    if seal_last < top:
        return f"the events after position {seal_last} are in no seal"
    return None


def _read_head(store: Store) -> tuple[int, int, tuple[Any, ...] | None]:
    recorder = store.app.recorder
    table, position = log_table(store.database.dialect)
    if isinstance(recorder, SingleTripRecorder):
        schema = recorder.datastore.schema
        statement = _HEAD.format(position=position, events=f"{schema}.{table}")
        statement = statement.replace(f" {event_chain.TABLE}", f" {schema}.{event_chain.TABLE}")
        statement = statement.replace(f" {seals.TABLE}", f" {schema}.{seals.TABLE}")
        with recorder.datastore.get_connection() as connection:
            cursor = connection.cursor(row_factory=psycopg.rows.tuple_row)
            values = tuple(cursor.execute(statement).fetchone() or ())
    else:
        assert isinstance(recorder, ChainingSQLiteRecorder)
        statement = _HEAD.format(position=position, events=table)
        with recorder.datastore.transaction(commit=False) as lite:
            lite.execute(statement)
            values = tuple(lite.fetchone() or ())
    top, reach, *seal = values
    return int(top), int(reach), None if seal[0] is None else tuple(seal)
