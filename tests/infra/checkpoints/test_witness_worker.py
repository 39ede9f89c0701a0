"""The server's witness worker on a file or a stream: where it goes on from, what it
refuses to go on from, two writers, and a witness that fails and comes back."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from domain.outcome import Receipt
from infra.checkpoints.file import FileWitness
from infra.checkpoints.format import Checkpoint, parse
from infra.checkpoints.jetstream import JetStreamWitness
from infra.checkpoints.witnesses import Witness, WitnessMoved, parse_nats
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.store import Store
from infra.witness import CannotChain, WitnessWorker
from tests.conftest import SEAL_KEY, StoreFactory
from tests.infra.audit.test_verify import Attacker
from tests.infra.checkpoints.nats_server import SERVICE, NatsServer
from tests.infra.http.helpers import serving

PUBLIC_KEY = SEAL_KEY.public_key()
RECEIPT = Receipt("cash-out-1", "test", lambda moved: {"id": moved.transaction_id})
SECOND_RECEIPT = Receipt("cash-out-2", "test", lambda moved: {"id": moved.transaction_id})
WitnessMaker = Callable[[], Witness]


@pytest.fixture(params=["file", "stream"])
def make_witness(request: pytest.FixtureRequest, tmp_path: Path) -> WitnessMaker:
    """A new witness object on the same file or stream at each call (a restarted or
    a second server process)."""
    if request.param == "file":
        return lambda: FileWitness(tmp_path / "witness.jsonl")
    server: NatsServer = request.getfixturevalue("nats_server")
    return lambda: JetStreamWitness(parse_nats(server.url(SERVICE)))


def chain_of(witness: Witness) -> list[Checkpoint]:
    found = [entry.record for entry in witness.entries()]
    assert all(isinstance(record, Checkpoint) for record in found)
    return found  # type: ignore[return-value]


def assert_one_chain(checkpoints: list[Checkpoint]) -> None:
    assert [c.counter for c in checkpoints] == list(range(1, len(checkpoints) + 1))
    for before, after in itertools.pairwise(checkpoints):
        assert after.previous == before.digest and after.position > before.position


def test_two_server_processes_on_one_witness_never_fork_its_chain(
    store: Store, make_witness: WitnessMaker
) -> None:
    # Given two server processes of one store, each with its witness worker
    first = WitnessWorker(store, make_witness(), seconds=60, events=1)
    second = WitnessWorker(store, make_witness(), seconds=60, events=1)
    store.app.register_player("ann", "Ann")
    assert first.note_if_due(0.0) is not None
    store.app.deposit("ann", "real", 100)
    assert second.note_if_due(0.0) is not None  # it goes on from the first's
    # When the first notes again, unaware of the second's checkpoint
    store.app.deposit("ann", "real", 100)
    with pytest.raises(WitnessMoved):
        first.note_if_due(1.0)
    # Then it reads the witness again and goes on from there: one chain
    assert first.note_if_due(2.0) is not None
    witness = make_witness()
    assert_one_chain(chain_of(witness))
    for worker in (first, second):
        worker.note_last()
    witness.close()


def test_the_worker_goes_on_from_no_checkpoint_the_store_does_not_hold(
    stores: StoreFactory, store: Store, make_witness: WitnessMaker
) -> None:
    # Given a witness that noted the log's last save
    worker = WitnessWorker(store, make_witness(), seconds=60, events=1)
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 100)
    noted = worker.note_if_due(0.0)
    assert noted is not None
    worker.note_last()
    # When that save is cut from the log, seals and all, and the server restarts
    attacker = Attacker(stores)
    for table, column in (
        (attacker.events, attacker.position),
        (event_chain.TABLE, "position"),
        (seals.TABLE, "first_position"),
    ):
        attacker.run(f"DELETE FROM {table} WHERE {column} >= ?", (noted.position,))
    attacker.close()
    store.app.deposit("ann", "real", 100)  # a new save where the cut one was
    restarted = WitnessWorker(store, make_witness(), seconds=60, events=1)
    # Then the worker refuses to chain on the checkpoint of the cut save, and says why
    with pytest.raises(CannotChain, match=f"position {noted.position}, and the store holds"):
        restarted.note_if_due(0.0)
    restarted.tick()
    assert restarted.problem is not None and "cut or rewritten" in restarted.problem
    witness = make_witness()
    assert chain_of(witness) == [noted]  # nothing noted on top of it
    witness.close()
    restarted.witness.close()


def test_after_a_cash_out_s_note_the_worker_s_own_notes_come_due_by_time(
    store: Store, make_witness: WitnessMaker
) -> None:
    # Given a worker that notes every 10 s, and a cash-out's note (due or not)
    worker = WitnessWorker(store, make_witness(), seconds=10, events=1_000)
    store.app.register_player("ann", "Ann")
    assert worker.note_if_due(time.monotonic()) is not None  # the first note, at once
    store.app.deposit("ann", "real", 100)
    head = store.app.withdraw.with_receipt(RECEIPT, "ann", "real", 50).position
    worker.cover(head)
    assert worker.head_position >= head
    # When the log moves on
    store.app.deposit("ann", "real", 100)
    # Then the worker's next note is due 10 s after the cash-out's, not never
    assert worker.note_if_due(time.monotonic()) is None
    assert worker.note_if_due(time.monotonic() + 10) is not None
    # And the next cash-out is covered by a note of its own
    store.app.deposit("ann", "real", 100)
    later = store.app.withdraw.with_receipt(SECOND_RECEIPT, "ann", "real", 50).position
    worker.cover(later)
    assert worker.head_position >= later
    worker.note_last()


def test_a_legacy_witness_file_goes_on_as_a_chain_and_verify_says_so(
    store: Store, tmp_path: Path
) -> None:
    from infra.audit.verify import verify

    # Given a witness file of an earlier version: a copy of the latest seal a line
    path = tmp_path / "witness.jsonl"
    store.app.register_player("ann", "Ann")
    with store.database.read() as cursor:
        cursor.execute(f"SELECT last_position, digest, signature FROM {seals.TABLE}")
        old = [
            {"position": p, "digest": d, "time": "2025-01-01T00:00:00+00:00", "signature": s}
            for p, d, s in cursor.fetchall()
        ]
    path.write_text("".join(json.dumps(line) + "\n" for line in old))
    # When this version's worker notes more
    store.app.deposit("ann", "real", 100)
    worker = WitnessWorker(store, FileWitness(path), seconds=60, events=1)
    noted = worker.note_if_due(0.0)
    assert noted is not None and noted.counter == 1  # the chain starts after them
    # Then verify reads both, and says the old lines carry no chain
    report = verify(store, None, lambda _: None, public_key=PUBLIC_KEY, witness=path)
    assert report.problems == []
    assert report.witness_checkpoints == len(old) + 1
    assert any(f"{len(old)} of the witness's checkpoints are legacy" in n for n in report.notes)


def test_an_unreachable_stream_degrades_the_server_and_it_recovers(
    store: Store, nats_server: NatsServer
) -> None:
    store.app.register_player("ann", "Ann")
    url = nats_server.url(SERVICE)
    with (
        capture_logs() as logged,
        serving(store, background=True, witness=url, witness_seconds=0.1) as api,
    ):
        wait_for(lambda: api.client.get("/v1/health/ready").json()["status"] == "ready")
        wait_for(lambda: len(nats_server.records()) == 1)
        # When the witness's server goes away and the log moves on
        nats_server.stop()
        api.deposit("ann", "5.00")
        # Then readiness names the witness in a failing check of a server that still
        # saves (rules.md 8: no cash-outs, the rest goes on), and the service answers
        answer = wait_for(lambda: degraded(api.client.get("/v1/health/ready")))
        workers = next(c for c in answer.json()["checks"] if c["name"] == "workers")
        assert "the witness at nats://casino:***@127.0.0.1" in workers["detail"]
        assert "service-secret" not in answer.text
        api.deposit("ann", "5.00")
        # And when it is back, so is readiness, and the saves meanwhile are noted
        nats_server.start()
        wait_for(lambda: api.client.get("/v1/health/ready").json()["status"] == "ready")
        # (the worker's failures are recorded as a significant event meanwhile: a save
        # noted by the next checkpoint, so the last is waited for, not read at once)
        wait_for(
            lambda: (
                parse(nats_server.records()[-1]).position  # type: ignore[union-attr]
                == store.app.recorder.max_notification_id()
            )
        )
    # Logged once when it failed, once when it recovered: no line a pass
    # (infra/fault_log.py, as every fault)
    told = [line["event"] for line in logged if line.get("cause") == "witness"]
    assert told == ["fault_started", "fault_ended"]


def degraded(answer: Any) -> Any:
    return answer if answer.status_code == 200 and answer.json()["status"] == "degraded" else None


def wait_for(condition: Callable[[], object], seconds: float = 15) -> object:
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        assert time.monotonic() < deadline, "it never came to pass"
        time.sleep(0.05)
    return found
