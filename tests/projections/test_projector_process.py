"""`casino projections run` as a real process: killed in the middle of a batch, then
started again, it leaves read models equal to a rebuild from the events."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import workload
from infra.audit.rebuild import compare_with_rebuild
from infra.store.store import Store
from projections.runner import BATCH_SIZE, empty
from tests.conftest import SERVICE_KEYS, StoreFactory

WAIT_SECONDS_MAX = 60
# The real command, with its position write stalled once two batches have committed:
# the third batch's read-model rows are written, its transaction still open.
STALLED_WORKER = """
import sys, time
from projections import runner
set_position, batches = runner._set_position, []
def stalled(cursor, position):
    batches.append(position)
    if len(batches) == 3:
        print("MID-BATCH", flush=True)
        time.sleep(600)
    set_position(cursor, position)
runner._set_position = stalled
from infra.cli import main
sys.argv = ["casino", "projections", "run"]
main()
"""


def worker_env(stores: StoreFactory) -> dict[str, str]:
    # The test store's own seal key: the process seals what it records (rules.md 5).
    return {
        **os.environ,
        **SERVICE_KEYS,
        "CASINO_DATABASE_URL": stores.url,
        "CASINO_POSTGRES_SCHEMA": stores.schema,
        "CASINO_LOG_LEVEL": "warning",
        "PYTHONPATH": str(Path(__file__).parents[2]),
    }


def wait_until(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS_MAX
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.05)


def test_a_worker_killed_mid_batch_loses_and_doubles_nothing(
    stores: StoreFactory, store: Store
) -> None:
    workload.play(store, workload.set_up(store), rounds=250, seed=3)
    head = store.projector.head()
    assert head > 3 * BATCH_SIZE
    with store.database.write() as cursor:
        empty(cursor)  # The read models start from nothing: three batches at least to go.

    stalled = subprocess.Popen(
        [sys.executable, "-c", STALLED_WORKER],
        env=worker_env(stores),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stalled.stdout is not None
        assert stalled.stdout.readline().strip() == "MID-BATCH"
        stalled.send_signal(signal.SIGKILL)
        stalled.wait(timeout=30)
    finally:
        stalled.kill()

    two_batches = store.app.recorder.select_notifications(start=1, limit=2 * BATCH_SIZE)[-1].id
    assert store.projector.position() == two_batches
    with store.database.read() as cursor:  # Not a row of the third batch either.
        cursor.execute("SELECT MAX(position) FROM round_trail")
        row = cursor.fetchone()
        assert row is not None and BATCH_SIZE < row[0] <= two_batches

    again = subprocess.Popen(
        [sys.executable, "-m", "infra.cli", "projections", "run"], env=worker_env(stores)
    )
    try:
        wait_until(lambda: store.projector.position() == head, "the worker to catch up")
        again.send_signal(signal.SIGTERM)
        assert again.wait(timeout=30) == 0
    finally:
        again.kill()
    assert compare_with_rebuild(store, lambda _: None).differences == []
