"""The server's background workers run on their own and stop when asked."""

import time

from infra.store.store import Store
from infra.workers import IdleRoundWorker, ProjectorWorker


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
