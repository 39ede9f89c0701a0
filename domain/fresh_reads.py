"""What queries load: every aggregate as the store has it now, kept in a bounded cache.

Queries must see what any process saved (read-your-writes across processes), so a
kept aggregate is never answered as it is: each read asks the store for the events
after the kept version (one indexed query, usually empty) and applies them to a copy.
A kept aggregate is never changed in place, because another thread may be shaping
an answer from it at that moment; the copy brought up to date replaces it. A miss,
or a kept aggregate so far behind that its snapshot is as near, loads from the
snapshot and the events after it, as the library's repository does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from copy import deepcopy
from typing import Any
from uuid import UUID

from eventsourcing.application import Repository, project_aggregate
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import EventStore

# A table, a player, a wallet or a round: about 0.5-1.2 KB pickled, a few KB in
# memory; some MB at most.
AGGREGATES_KEPT_MAX = 2_000
# Further behind than this, the snapshot (every 100 to 200 events) is about as near.
EVENTS_AFTER_KEPT_MAX = 100


class FreshReads(Repository[UUID]):
    """The queries' repository: a bounded LRU cache of aggregates, each brought up to
    date with the store on every read."""

    def __init__(
        self,
        event_store: EventStore[UUID],
        snapshot_store: EventStore[UUID] | None,
        kept_max: int = AGGREGATES_KEPT_MAX,
    ) -> None:
        super().__init__(event_store, snapshot_store=snapshot_store)
        self.kept_max = kept_max
        self._kept: OrderedDict[UUID, Aggregate] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, aggregate_id: UUID, *, version: int | None = None, **options: Any) -> Any:
        """The aggregate as stored now (or at `version`, read from the store)."""
        projector = options.get("projector_func", project_aggregate)
        if version is not None:
            return super().get(aggregate_id, version=version, **options)
        kept = self._kept_one(aggregate_id)
        if kept is not None:
            newer = list(
                self.event_store.get(aggregate_id, gt=kept.version, limit=EVENTS_AFTER_KEPT_MAX)
            )
            if not newer:
                return kept
            if len(newer) < EVENTS_AFTER_KEPT_MAX:
                return self._keep(projector(deepcopy(kept), newer))
        return self._keep(self._reconstruct_aggregate(aggregate_id, None, projector))

    def kept_count(self) -> int:
        with self._lock:
            return len(self._kept)

    def _kept_one(self, aggregate_id: UUID) -> Aggregate | None:
        with self._lock:
            kept = self._kept.get(aggregate_id)
            if kept is not None:
                self._kept.move_to_end(aggregate_id)
        # Queries only read: an event recorded on a shared aggregate is our bug.
        assert kept is None or not kept.pending_events, "a query changed a kept aggregate"
        return kept

    def _keep(self, aggregate: Aggregate) -> Aggregate:
        """Keep the newest version any reader brought up, the least recently read first
        to go past the bound."""
        with self._lock:
            kept = self._kept.get(aggregate.id)
            if kept is None or kept.version < aggregate.version:
                self._kept[aggregate.id] = aggregate
            self._kept.move_to_end(aggregate.id)
            while len(self._kept) > self.kept_max:
                self._kept.popitem(last=False)
        return aggregate
