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
from collections.abc import Sequence
from copy import deepcopy
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from eventsourcing.application import Repository, project_aggregate
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import EventStore, StoredEvent

from infra.commands.unit import project

# A table, a player, a wallet or a round: about 0.5-1.2 KB pickled, a few KB in
# memory; some MB at most.
AGGREGATES_KEPT_MAX = 2_000
# Further behind than this, the snapshot (every 100 to 200 events) is about as near.
EVENTS_AFTER_KEPT_MAX = 100


@runtime_checkable
class NewerReads(Protocol):
    """A store that reads the events after several aggregates' versions in one round
    trip (infra/store/event_reads.py: the PostgreSQL recorder's)."""

    def select_newer(
        self, versions: dict[UUID, int], limit_each: int
    ) -> dict[UUID, list[StoredEvent]] | None: ...


class _Together(Repository[UUID]):
    """Answers the aggregates one query brought up to date, and asks `reads` for any
    other (a round the table moved on to since it was kept, say)."""

    def __init__(self, reads: FreshReads, current: dict[UUID, Aggregate]) -> None:
        super().__init__(reads.event_store, snapshot_store=reads.snapshot_store)
        self._reads = reads
        self._current = current

    def get(self, aggregate_id: UUID, *, version: int | None = None, **options: Any) -> Any:
        found = self._current.get(aggregate_id)
        if found is None or version is not None:
            return self._reads.get(aggregate_id, version=version, **options)
        return found


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
        # Looked at once: a Protocol's isinstance check costs microseconds a call.
        recorder = event_store.recorder
        self._newer = recorder if isinstance(recorder, NewerReads) else None

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

    def together(self, aggregate_ids: Sequence[UUID]) -> Repository[UUID]:
        """A repository for one answer that reads several aggregates: those of these
        kept here are brought up to date in one query (where the store can: the
        PostgreSQL recorder's `select_newer`), the rest are read one by one as `get`
        reads them. A P2P table's answer reads the table and its round: one round
        trip, not two."""
        kept = {key: found for key in aggregate_ids if (found := self._kept_one(key)) is not None}
        if len(kept) < 2 or self._newer is None:
            return self
        versions = {key: found.version for key, found in kept.items()}
        newer = self._newer.select_newer(versions, EVENTS_AFTER_KEPT_MAX)
        if newer is None:
            return self  # some are far behind: each from its snapshot, as `get` does
        current: dict[UUID, Aggregate] = {}
        for key, found in kept.items():
            stored = newer[key]
            if len(stored) >= EVENTS_AFTER_KEPT_MAX:
                continue  # far behind: `get` reads it from its snapshot
            events = [self.event_store.mapper.to_domain_event(event) for event in stored]
            current[key] = self._keep(project(deepcopy(found), events)) if events else found
        return _Together(self, current)

    def kept(self, aggregate_id: UUID) -> Aggregate | None:
        """The aggregate as last read here, perhaps behind the store: no query."""
        return self._kept_one(aggregate_id)

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
