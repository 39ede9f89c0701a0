"""The server's background workers run on their own and stop when asked."""

import time

from infra.store import Store
from infra.workers import ProjectorWorker


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
