"""The unit of work: what one attempt of a command loaded, created and changed.

It knows no game. A command loads aggregates through it by id and kind, adds the
ones it creates, and the seam (infra/commands/seam.py) saves every one of them in
one atomic save. The domain sees it as `domain.unit.Unit`, a Protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any, TypeVar, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Repository
from eventsourcing.domain import Aggregate, DomainEventProtocol

from domain.errors import DomainError
from domain.unit import SecretBox

A = TypeVar("A", bound=Aggregate)
# A provider's round takes at most 1,000 calls (domain/providers/round.py); a longer
# answer is cut short and each aggregate read on its own.
READ_AHEAD_EVENTS_MAX = 1_010


class Unit:
    def __init__(self, repository: Repository[UUID], box: SecretBox | None) -> None:
        self._repository = repository
        # Seals the secrets of what a command opens, and opens those of what it loads;
        # a query's unit has none, so it never opens a round's secrets.
        self.box = box
        self._aggregates: dict[UUID, Aggregate] = {}
        self.loaded_versions: dict[UUID, int] = {}  # as read, before this command changed them
        self._read_ahead: dict[UUID, list[DomainEventProtocol[UUID]]] = {}

    def read_ahead(self, aggregate_ids: Sequence[UUID]) -> None:
        """Read these aggregates' events in one round trip where the store can (the
        PostgreSQL recorder's `select_newer`), for those neither held nor cached: the
        `find` of each that follows then asks the store nothing. For kinds that are
        never snapshotted (`NEVER_SNAPSHOTTED`), which are read from their first event:
        a provider's bet opening a round looks up the bet and the round, usually to find
        neither exists yet, and one trip does for both."""
        repository, cache = self._repository, self._repository.cache
        newer = getattr(repository.event_store.recorder, "select_newer", None)
        if newer is None or cache is None or repository.fastforward:
            return
        wanted = [key for key in aggregate_ids if key not in self._aggregates]
        wanted = [key for key in wanted if not _cached(cache, key)]
        if not wanted:
            return
        found = newer(dict.fromkeys(wanted, 0), READ_AHEAD_EVENTS_MAX)
        if found is None:
            return  # a long stream: each is read on its own
        mapper = repository.event_store.mapper
        for key, stored in found.items():
            self._read_ahead[key] = [mapper.to_domain_event(event) for event in stored]

    def get(self, cls: type[A], aggregate_id: UUID, missing: Callable[[], DomainError]) -> A:
        """The aggregate of that id and kind, or the refusal `missing` makes."""
        aggregate = self.find(cls, aggregate_id)
        if aggregate is None:
            raise missing()
        return aggregate

    def find(self, cls: type[A], aggregate_id: UUID) -> A | None:
        if aggregate_id not in self._aggregates:
            try:
                loaded: Aggregate = self._load(cls, aggregate_id)
            except AggregateNotFoundError:
                return None
            # A round: a command may deal it, and its seed is stored sealed.
            unseal = getattr(loaded, "unseal", None)
            if unseal is not None and self.box is not None:
                unseal(self.box)
            self._aggregates[aggregate_id] = loaded
            self.loaded_versions[aggregate_id] = loaded.version
        aggregate = self._aggregates[aggregate_id]
        # Ids are public: one of another kind (a table id sent as a round id) is not found.
        return aggregate if isinstance(aggregate, cls) else None

    def _load(self, cls: type[A], aggregate_id: UUID) -> Aggregate:
        """The aggregate from the commands' cache or the store. A kind that is never
        snapshotted (`NEVER_SNAPSHOTTED`: a provider's round, a bet under its
        transaction id) is read from its events alone: the library would ask the
        snapshot store first, a query that can only come back empty, and such kinds
        are mostly looked up to find they do not exist yet (a new round)."""
        repository, cache = self._repository, self._repository.cache
        if not getattr(cls, "NEVER_SNAPSHOTTED", False) or cache is None or repository.fastforward:
            loaded: Aggregate = repository.get(aggregate_id, projector_func=project)
            return loaded
        try:
            kept: Aggregate = cast(Aggregate, cache.get(aggregate_id))
        except KeyError:
            read = self._read_ahead.pop(aggregate_id, None)
            if read is None:
                read = list(repository.event_store.get(aggregate_id))
            kept = project(None, read)
            if kept is None:
                raise AggregateNotFoundError(aggregate_id) from None
            cache.put(aggregate_id, kept)
        return deepcopy(kept) if repository.deepcopy_from_cache else kept

    def held(self, aggregate_id: UUID) -> Aggregate | None:
        """The aggregate if this unit loaded or added it already, as it stands in it."""
        return self._aggregates.get(aggregate_id)

    def sealing(self) -> SecretBox:
        """The box a command seals a new round's secrets with."""
        assert self.box is not None, "a query opens no round"
        return self.box

    def add(self, aggregate: Aggregate) -> None:
        self._aggregates[aggregate.id] = aggregate

    def aggregates(self) -> list[Aggregate]:
        return list(self._aggregates.values())


def _cached(cache: Any, aggregate_id: UUID) -> bool:
    try:
        cache.get(aggregate_id)
    except KeyError:
        return False
    return True


def project(aggregate: Any, events: Iterable[Any]) -> Any:
    """The library's aggregate projector, without its assert that each event is an
    instance of a typing Protocol: on Python 3.11 that check alone took half of a
    replay-heavy profile (19 of 39 s loading wallets and tables in memory), and every
    stored event is one of our own event classes anyway."""
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate
