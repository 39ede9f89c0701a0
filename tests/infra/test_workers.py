"""The server's background workers run on their own and stop when asked."""

import time

import pytest

from infra.store.store import Store
from infra.workers import IdleRoundWorker, ProjectorWorker, pause_before_catch_up
from tests.conftest import StoreFactory


def test_the_projector_worker_brings_the_read_models_up_without_a_reader(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1000)
    latest = store.app.recorder.max_notification_id()
    worker = ProjectorWorker(store)
    worker.start()
    deadline = time.monotonic() + 10
    while store.projector.position() < latest and time.monotonic() < deadline:
        time.sleep(0.02)
    worker.stop()
    assert store.projector.position() == latest
    assert not worker._thread.is_alive()


def test_catch_ups_are_spaced_only_while_commits_keep_coming() -> None:
    assert pause_before_catch_up(0.02, caught_up_at=10.0, now=lambda: 10.005) == pytest.approx(
        0.015
    )
    assert pause_before_catch_up(0.02, caught_up_at=10.0, now=lambda: 11.0) == 0.0
    assert pause_before_catch_up(0.0, caught_up_at=10.0, now=lambda: 10.0) == 0.0


def projected_within(store: Store, position: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while store.projector.position() < position and time.monotonic() < deadline:
        time.sleep(0.01)
    return store.projector.position() >= position


def test_a_commit_after_a_quiet_spell_is_projected_at_once_the_next_one_a_spacing_later(
    postgres_stores: StoreFactory,
) -> None:
    store = postgres_stores.open()
    store.app.register_player("alice", "Alice")
    spacing = 1.0
    worker = ProjectorWorker(store, debounce_seconds=spacing)
    worker.start()
    try:
        assert projected_within(store, store.app.recorder.max_notification_id() or 0, 5)
        time.sleep(spacing + 0.1)  # quiet
        store.app.deposit("alice", "real", 1000)
        assert projected_within(store, store.app.recorder.max_notification_id() or 0, 0.5)
        store.app.deposit("alice", "real", 1000)  # right behind it: gathered a spacing later
        latest = store.app.recorder.max_notification_id() or 0
        assert not projected_within(store, latest, spacing / 2)
        assert projected_within(store, latest, 5)
    finally:
        worker.stop()


def test_a_deadline_missed_while_the_server_was_down_fires_as_the_worker_starts(
    store: Store,
) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1000)
    round_ = store.app.open_house_round("alice", "real").result
    assert round_ is not None
    store.app.place_bet(round_.round_id, "banker", 500)
    time.sleep(1.1)  # Idle past the timeout before any worker runs.
    worker = IdleRoundWorker(store, timeout_seconds=1)
    worker.interval_seconds = 3600.0  # Its next regular check would be an hour away.
    worker.start()
    deadline = time.monotonic() + 10
    while store.app.round(round_.round_id).status != "voided" and time.monotonic() < deadline:
        time.sleep(0.02)
    worker.stop()
    assert store.app.round(round_.round_id).status == "voided"
    assert store.app.wallet("alice", "real").held_cents == 0
