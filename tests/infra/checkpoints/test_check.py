"""What verify names in a witness, a file or a stream alike: a checkpoint removed,
moved, replaced, forged or altered, one rebuilt from the database's seals, and the
seals a witness saw that the store no longer holds."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nats.aio.client import Client

from infra.audit.verify import verify
from infra.checkpoints.file import FileWitness
from infra.checkpoints.format import Checkpoint, digest_of, parse
from infra.checkpoints.jetstream import JetStreamWitness
from infra.checkpoints.witnesses import Witness, parse_nats
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.store import Store
from infra.witness import WitnessWorker
from tests.conftest import SEAL_KEY, StoreFactory
from tests.infra.audit.test_verify import Attacker, named
from tests.infra.checkpoints.nats_server import AUDITOR, OPERATOR, SUBJECT, NatsServer

PUBLIC_KEY = SEAL_KEY.public_key()
Records = list[Checkpoint]


def noted_five(store: Store, path: Path) -> Records:
    """Five checkpoints the service noted, one per save, in a file."""
    worker = WitnessWorker(store, FileWitness(path), seconds=60, events=1)
    store.app.register_player("ann", "Ann")
    worker.note_if_due(0.0)
    for _ in range(4):
        store.app.deposit("ann", "real", 100)
        worker.note_if_due(0.0)
    found = [parse(line) for line in path.read_bytes().splitlines()]
    assert [record.counter for record in found] == [1, 2, 3, 4, 5]  # type: ignore[union-attr]
    return found  # type: ignore[return-value]


def signed(record: Checkpoint, key: Ed25519PrivateKey = SEAL_KEY, **changes: object) -> Checkpoint:
    """`record` changed, its digest and signature made again as the service makes them."""
    changed = dataclasses.replace(record, **changes)  # type: ignore[arg-type]
    digest = digest_of(
        changed.counter, changed.position, changed.seal, changed.previous, changed.time
    )
    return dataclasses.replace(changed, digest=digest, signature=key.sign(digest.encode()).hex())


def legacy_copy_of_last_seal(store: Store) -> bytes:
    """What an insider can rebuild from the database alone: a seal row, as the old
    witness files held it."""
    with store.database.read() as cursor:
        cursor.execute(
            f"SELECT last_position, digest, signature FROM {seals.TABLE}"
            " ORDER BY last_position DESC LIMIT 1"
        )
        position, digest, signature = cursor.fetchone()
    at = "2026-01-01T00:00:00+00:00"
    line = {"position": position, "digest": digest, "time": at, "signature": signature}
    return json.dumps(line).encode()


TAMPERINGS: dict[str, tuple[Callable[[Records], list[Checkpoint | bytes]], tuple[str, ...]]] = {
    "removed": (lambda r: [r[0], r[1], r[3], r[4]], ("checkpoint 3 is missing before", "removed")),
    "reordered": (
        lambda r: [r[0], r[1], r[3], r[2], r[4]],
        ("checkpoint 3 comes after checkpoint 4", "order was changed"),
    ),
    "not chained": (
        lambda r: [r[0], r[1], signed(r[2], previous="ab" * 32), r[3], r[4]],
        ("checkpoint 3 does not follow checkpoint 2", "replaced or rebuilt"),
    ),
    "not signed": (
        lambda r: [r[0], r[1], signed(r[2], Ed25519PrivateKey.generate()), r[3], r[4]],
        ("checkpoint 3 is not signed by the pinned key",),
    ),
    "altered": (
        lambda r: [r[0], r[1], dataclasses.replace(r[2], time="2020-01-01T00:00:00+00:00")],
        ("checkpoint 3 does not hash to its digest: altered",),
    ),
    "replayed": (lambda r: [*r, r[2]], ("checkpoint 3 again, after checkpoint 5",)),
    "moved back": (
        lambda r: [*r[:4], signed(r[4], position=r[1].position)],
        ("checkpoint 5 notes position", "reordered or rebuilt"),
    ),
    "dropped from the start": (lambda r: r[2:], ("checkpoints 1..2 are missing at the witness's",)),
}


class Target:
    """Where tampered checkpoints are written, and a witness that reads them."""

    def write(self, records: list[Checkpoint | bytes]) -> None:
        raise NotImplementedError

    def witness(self) -> Witness:
        raise NotImplementedError


class FileTarget(Target):
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, records: list[Checkpoint | bytes]) -> None:
        self.path.write_bytes(b"".join(record_bytes(record) + b"\n" for record in records))

    def witness(self) -> Witness:
        return FileWitness(self.path)


class StreamTarget(Target):
    def __init__(self, server: NatsServer) -> None:
        self.server = server

    def write(self, records: list[Checkpoint | bytes]) -> None:
        async def publish(connection: Client) -> None:
            stream = connection.jetstream()
            for record in records:
                await stream.publish(SUBJECT, record_bytes(record))

        self.server.as_user(OPERATOR, publish)

    def witness(self) -> Witness:
        return JetStreamWitness(parse_nats(self.server.url(AUDITOR)))


def record_bytes(record: Checkpoint | bytes) -> bytes:
    return record if isinstance(record, bytes) else record.record()


@pytest.fixture(params=["file", "stream"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    if request.param == "file":
        yield FileTarget(tmp_path / "tampered.jsonl")
    else:
        yield StreamTarget(request.getfixturevalue("nats_server"))


def problems_with(store: Store, target: Target) -> list[str]:
    witness = target.witness()
    try:
        return verify(store, None, lambda _: None, public_key=PUBLIC_KEY, witness=witness).problems
    finally:
        witness.close()


def test_an_honest_witness_holds(store: Store, target: Target, tmp_path: Path) -> None:
    target.write(list(noted_five(store, tmp_path / "noted.jsonl")))
    assert problems_with(store, target) == []


@pytest.mark.parametrize("tampering", list(TAMPERINGS))
def test_verify_names_a_witness_tampered_with(
    store: Store, target: Target, tmp_path: Path, tampering: str
) -> None:
    # Given the service's five checkpoints, tampered with where the witness keeps them
    change, told = TAMPERINGS[tampering]
    target.write(change(noted_five(store, tmp_path / "noted.jsonl")))
    # Then verify names it
    problems = problems_with(store, target)
    assert named(problems, *told), problems


def test_a_checkpoint_rebuilt_from_the_databases_seals_is_named(
    store: Store, target: Target, tmp_path: Path
) -> None:
    noted = noted_five(store, tmp_path / "noted.jsonl")
    target.write([*noted, legacy_copy_of_last_seal(store)])
    problems = problems_with(store, target)
    assert named(problems, "unchained (legacy) checkpoint after the chain began"), problems


def test_a_cut_tail_is_named_by_every_checkpoint_past_it(
    stores: StoreFactory, store: Store, target: Target, tmp_path: Path
) -> None:
    # Given a witness that noted five checkpoints
    noted = noted_five(store, tmp_path / "noted.jsonl")
    target.write(list(noted))
    # When the last two saves are cut, events, links and seals alike
    attacker = Attacker(stores)
    cut_from = noted[3].position
    for table, column in (
        (attacker.events, attacker.position),
        (event_chain.TABLE, "position"),
        (seals.TABLE, "first_position"),
    ):
        attacker.run(f"DELETE FROM {table} WHERE {column} >= ?", (cut_from,))
    attacker.close()
    store.projector.catch_up()
    # Then the witness's last two checkpoints name the seals the store lost
    problems = problems_with(store, target)
    for checkpoint in noted[3:]:
        assert named(
            problems, f"the store holds no seal ending at position {checkpoint.position}"
        ), problems


def test_a_witness_with_nothing_while_the_store_is_sealed_is_named(
    store: Store, target: Target
) -> None:
    store.app.register_player("ann", "Ann")
    target.write([])
    problems = problems_with(store, target)
    assert named(problems, "holds no checkpoint, while the store is sealed"), problems
