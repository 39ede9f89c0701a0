"""The commands' cache (the library's repository cache, no fast-forward): what a save
puts in it and what a conflict or a stale read takes out (infra/commands/seam.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from eventsourcing.application import Repository
from eventsourcing.domain import Aggregate


def cache_saved(repository: Repository[UUID], aggregates: dict[UUID, Any]) -> None:
    """Saved aggregates into the commands' cache, as the library's own save does, but
    never over a newer copy: an aggregate the command only read may have been moved on
    by a command saved meanwhile, whose copy is already cached (put back, the older one
    would make the next command on it conflict and run again)."""
    cache = repository.cache
    if cache is None or repository.fastforward:
        return
    for aggregate_id, aggregate in aggregates.items():
        with contextlib.suppress(KeyError):
            if cache.get(aggregate_id).version > aggregate.version:
                continue
        cache.put(aggregate_id, aggregate)


def forget(repository: Repository[UUID], aggregates: Iterable[Aggregate]) -> None:
    """Take the aggregates out of the commands' cache: they are read afresh next time."""
    if repository.cache is not None:
        for aggregate in aggregates:
            with contextlib.suppress(KeyError):
                repository.cache.get(aggregate.id, evict=True)
