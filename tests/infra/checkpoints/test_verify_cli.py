"""`casino audit verify --witness nats://...`: a stream read as the auditor; one that
cannot be read fails verify; what the stream's operator can still do is named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from nats.aio.client import Client

from infra.checkpoints.jetstream import JetStreamWitness
from infra.checkpoints.witnesses import parse_nats
from infra.store.seal import public_key_text
from infra.store.store import Store
from infra.witness import WitnessWorker
from tests.conftest import SEAL_KEY, StoreFactory
from tests.infra.audit.test_verify import run_cli
from tests.infra.checkpoints.nats_server import (
    AUDITOR,
    OPERATOR,
    SERVICE,
    STREAM,
    NatsServer,
    stream_config,
)

PUBLIC_KEY = public_key_text(SEAL_KEY.public_key())


def noted(store: Store, server: NatsServer, saves: int) -> None:
    """`saves` deposits, each noted on the stream by the service."""
    worker = WitnessWorker(store, JetStreamWitness(parse_nats(server.url(SERVICE))), 60, 1)
    store.app.register_player("ann", "Ann")
    worker.note_if_due(0.0)
    for _ in range(saves - 1):
        store.app.deposit("ann", "real", 100)
        worker.note_if_due(0.0)
    worker.note_last()


def verify_with(stores: StoreFactory, witness: str) -> tuple[int, str]:
    answer = run_cli(stores, "audit", "verify", "--public-key", PUBLIC_KEY, "--witness", witness)
    return answer.returncode, answer.stdout + answer.stderr


def test_verify_reads_the_configured_stream_as_the_auditor(
    stores: StoreFactory, store: Store, nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    noted(store, nats_server, saves=3)
    monkeypatch.setenv("CASINO_WITNESS", nats_server.url(AUDITOR))
    answer = run_cli(stores, "audit", "verify", "--public-key", PUBLIC_KEY)
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "witness: 3 checkpoints checked" in answer.stdout
    assert "auditor-secret" not in answer.stdout + answer.stderr


def test_a_witness_that_cannot_be_reached_fails_verify(
    stores: StoreFactory, store: Store, nats_server: NatsServer
) -> None:
    noted(store, nats_server, saves=2)
    url = nats_server.url(AUDITOR)
    nats_server.stop()
    status, said = verify_with(stores, url)
    assert status == 2, said  # as a store that cannot be reached: nothing was checked
    assert f"--witness: the witness at {parse_nats(url).shown} cannot be reached" in said
    assert "auditor-secret" not in said


def test_a_deleted_stream_is_named_by_verify(
    stores: StoreFactory, store: Store, nats_server: NatsServer
) -> None:
    # Given checkpoints on the stream, and the stream then deleted by its operator
    # (deny_delete keeps each message, not the stream: its operator's to guard)
    noted(store, nats_server, saves=2)

    async def delete(connection: Client) -> None:
        await connection.jetstream().delete_stream(STREAM)

    nats_server.as_user(OPERATOR, delete)
    status, said = verify_with(stores, nats_server.url(AUDITOR))
    assert status == 1, said
    assert f"the stream {STREAM} is not there" in said


def test_checkpoints_aged_out_by_the_operator_are_named(
    stores: StoreFactory, store: Store, nats_server: NatsServer
) -> None:
    # Given four checkpoints, and the operator lowering the stream's limit with
    # discard "old": what deny_purge still lets the operator do
    noted(store, nats_server, saves=4)

    async def lower(connection: Client) -> None:
        config = stream_config().evolve(max_msgs=2, discard="old")
        await connection.jetstream().update_stream(config)

    nats_server.as_user(OPERATOR, lower)
    status, said = verify_with(stores, nats_server.url(AUDITOR))
    assert status == 1, said
    assert "checkpoints 1..2 are missing at the witness's start: removed" in said


def test_an_export_of_the_stream_verifies_as_the_stream_does(
    stores: StoreFactory, store: Store, nats_server: NatsServer, tmp_path: Path
) -> None:
    # Given the stream exported by the auditor to a file
    noted(store, nats_server, saves=3)
    exported = tmp_path / "exported.jsonl"
    command = ["-m", "infra.checkpoints.export", nats_server.url(AUDITOR), "-o", str(exported)]
    answer = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert answer.returncode == 0, answer.stderr
    assert "3 records copied from nats://auditor:***@" in answer.stderr
    assert exported.read_bytes().splitlines() == nats_server.records()
    # Then verify reads the file as it read the stream
    status, said = verify_with(stores, str(exported))
    assert status == 0, said
    assert "witness: 3 checkpoints checked" in said
