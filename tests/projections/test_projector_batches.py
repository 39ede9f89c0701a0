"""A catch-up costs the writers as little as it can: one write transaction (the read
models' lock) per batch of new events, and none to learn that it is done."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from infra.audit.decoding import EventDecoder
from infra.store.store import Store
from projections import balances


def count_writes(store: Store, monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    database = store.projector.database
    write, writes = database.write, []

    def counted() -> Any:
        writes.append(1)
        return write()

    monkeypatch.setattr(database, "write", counted)
    return lambda: len(writes)


def test_a_catch_up_writes_once_per_batch_and_never_an_empty_one(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given read models up to date with a player's first events
    store.app.register_player("alice", "Alice")
    store.projector.catch_up()
    writes = count_writes(store, monkeypatch)
    # When one deposit is saved and the read models catch up
    store.app.deposit("alice", "real", 500)
    applied = store.projector.catch_up()
    # Then its events are applied in one write transaction, with no empty one after
    assert applied > 0
    assert writes() == 1
    assert store.projector.position() == store.projector.head()
    # And a catch-up with nothing new takes no write at all
    assert store.projector.catch_up() == 0
    assert writes() == 1


def test_a_long_catch_up_writes_one_batch_after_another_up_to_the_head(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.app.register_player("alice", "Alice")
    store.projector.catch_up()
    for cents in (100, 200, 300):
        store.app.deposit("alice", "real", cents)
    fresh = store.projector.head() - store.projector.position()
    store.projector.batch_size = 2
    writes = count_writes(store, monkeypatch)
    assert store.projector.catch_up() == fresh
    assert writes() == -(-fresh // 2)  # ceil: full batches, then the rest; nothing more
    assert store.projector.position() == store.projector.head()


def test_events_fed_again_are_applied_once(store: Store) -> None:
    # Given a player's deposits, read and decoded as the audit tools do
    store.app.register_player("alice", "Alice")
    for cents in (100, 200, 300):
        store.app.deposit("alice", "real", cents)
    decode = EventDecoder(store.app.mapper).of
    events = [
        (n.id, decode(n)) for n in store.app.recorder.select_notifications(start=1, limit=100)
    ]
    scratch = store.projector
    # When the first half is fed, then everything (the first half again among it)
    half = len(events) // 2
    assert scratch.feed(events[:half]) == half
    assert scratch.feed(events) == len(events) - half
    # Then each deposit is in the balances once
    with scratch.database.read() as cursor:
        assert balances.liability(cursor, "real")[0] == 600
    assert scratch.feed(events) == 0
