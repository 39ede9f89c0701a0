"""The witness on a NATS JetStream stream: what the service notes there, what its
user may do there, and what even the stream's operator cannot."""

from __future__ import annotations

import asyncio
from typing import Any

import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client

from infra.audit.verify import verify
from infra.checkpoints.format import GENESIS, Checkpoint, parse
from infra.checkpoints.jetstream import JetStreamWitness
from infra.checkpoints.witnesses import WitnessUnavailable, parse_nats
from infra.store.store import Store
from infra.witness import WitnessWorker
from tests.conftest import SEAL_KEY
from tests.infra.checkpoints.nats_server import (
    AUDITOR,
    OPERATOR,
    SERVICE,
    STREAM,
    NatsServer,
    nats_server_or_skip,
    service_permissions,
    stream_config,
)

PUBLIC_KEY = SEAL_KEY.public_key()


def jetstream(server: NatsServer, user: str = SERVICE) -> JetStreamWitness:
    return JetStreamWitness(parse_nats(server.url(user)))


def checkpoints_in(server: NatsServer) -> list[Checkpoint]:
    found = [parse(record) for record in server.records()]
    assert all(isinstance(record, Checkpoint) for record in found)
    return found  # type: ignore[return-value]


def problems_of(store: Store, server: NatsServer) -> list[str]:
    witness = jetstream(server, AUDITOR)
    try:
        return verify(store, None, lambda _: None, public_key=PUBLIC_KEY, witness=witness).problems
    finally:
        witness.close()


def test_checkpoints_count_and_chain_across_a_restart_of_the_worker(
    store: Store, nats_server: NatsServer
) -> None:
    # Given a server's witness that noted two checkpoints, then stopped
    worker = WitnessWorker(store, jetstream(nats_server), seconds=60, events=1)
    store.app.register_player("ann", "Ann")
    assert worker.note_if_due(0.0) is not None
    store.app.deposit("ann", "real", 100)
    assert worker.note_if_due(1.0) is not None
    worker.note_last()  # nothing new to note: it lets the stream go
    # When the server starts again and notes more
    restarted = WitnessWorker(store, jetstream(nats_server), seconds=60, events=1)
    store.app.deposit("ann", "real", 100)
    assert restarted.note_if_due(0.0) is not None
    restarted.note_last()
    # Then the stream holds one chain, counted without a gap, each signed, the last
    # the log's last seal; and verify, reading it as the auditor, finds all holds
    noted = checkpoints_in(nats_server)
    assert [checkpoint.counter for checkpoint in noted] == [1, 2, 3]
    assert [checkpoint.previous for checkpoint in noted] == [GENESIS] + [
        checkpoint.digest for checkpoint in noted[:-1]
    ]
    assert noted[-1].position == store.app.recorder.max_notification_id()
    assert problems_of(store, nats_server) == []


def test_the_note_returns_once_the_stream_has_acknowledged(
    store: Store, nats_server: NatsServer
) -> None:
    witness = jetstream(nats_server)
    worker = WitnessWorker(store, witness, seconds=60, events=1)
    store.app.register_player("ann", "Ann")
    noted = worker.note_if_due(0.0)
    # The checkpoint is in the stream by the time the call returns
    assert noted is not None and checkpoints_in(nats_server) == [noted]
    worker.note_last()


def one_checkpoint_noted(store: Store, server: NatsServer) -> None:
    worker = WitnessWorker(store, jetstream(server), seconds=60, events=1)
    store.app.register_player("ann", "Ann")
    assert worker.note_if_due(0.0) is not None
    worker.note_last()


# What the service's user may do on the witness's server: publish its checkpoints and
# read the stream, nothing more.


def refused(server: NatsServer, user: str, work: Any) -> str:
    """What the server answers `user` doing `work`: a JetStream error, or a request
    never answered (the server drops what a permission refuses)."""

    async def attempt(connection: Client) -> str:
        try:
            await asyncio.wait_for(work(connection.jetstream(timeout=1)), 1)
        except nats.js.errors.APIError as error:
            return f"refused: {error.description}"
        except TimeoutError:  # nats-py's own too
            return "not answered"
        return "done"

    return server.as_user(user, attempt)


SERVICE_MUST_NOT = {
    "purge the stream": lambda js: js.purge_stream(STREAM),
    "delete a checkpoint": lambda js: js.delete_msg(STREAM, 1),
    "delete the stream": lambda js: js.delete_stream(STREAM),
    "lift deny_purge": lambda js: js.update_stream(stream_config().evolve(deny_purge=False)),
    "make a stream": lambda js: js.add_stream(name="MINE", subjects=["mine"]),
    "make a consumer": lambda js: js.add_consumer(STREAM),
}


@pytest.mark.parametrize("what", list(SERVICE_MUST_NOT))
def test_the_service_user_cannot_remove_or_change_what_the_stream_holds(
    store: Store, nats_server: NatsServer, what: str
) -> None:
    # Given a stream holding a checkpoint
    one_checkpoint_noted(store, nats_server)
    # When the service's user tries, then the server does not even pass it on
    assert refused(nats_server, SERVICE, SERVICE_MUST_NOT[what]) == "not answered"
    assert len(checkpoints_in(nats_server)) == 1


def test_the_service_user_cannot_publish_outside_its_subject(nats_server: NatsServer) -> None:
    async def publish(connection: Client) -> None:
        for subject in ("casino.witness.OTHER", "casino.feed", "$JS.API.STREAM.PURGE.CASINO"):
            await connection.publish(subject, b"{}")
        await connection.flush()
        await asyncio.sleep(0.2)  # the server's complaints come after the flush

    complaints: list[str] = []

    async def heard(error: Exception) -> None:
        complaints.append(str(error))

    nats_server.as_user(SERVICE, publish, heard)
    assert len(complaints) == 3 and all("permissions violation" in c for c in complaints)


@pytest.mark.parametrize("lost", ["publish the subject", "read a message", "its own inbox"])
def test_each_permission_of_the_service_is_needed(store: Store, tmp_path: Any, lost: str) -> None:
    # Given a server whose service user lacks one of its three permissions
    nats_server_or_skip()
    permissions = service_permissions()
    index = {"publish the subject": 0, "read a message": 1}.get(lost)
    if index is None:
        permissions["subscribe"] = ["_INBOX_someone_else.>"]
    else:
        del permissions["publish"][index]
    server = NatsServer(tmp_path, permissions)
    server.start()
    try:
        server.make_stream()
        store.app.register_player("ann", "Ann")
        witness = JetStreamWitness(parse_nats(server.url(SERVICE)), ack_seconds=1, read_seconds=1)
        # Then the witness notes nothing, and says so
        with pytest.raises(WitnessUnavailable, match="did not answer"):
            WitnessWorker(store, witness, seconds=60, events=1).note_if_due(0.0)
        witness.close()
    finally:
        server.stop()


# What the witness operator cannot do once the stream denies deleting and purging.


OPERATOR_CANNOT = {
    "purge the stream": (lambda js: js.purge_stream(STREAM), "stream purge not permitted"),
    "delete a checkpoint": (lambda js: js.delete_msg(STREAM, 1), "message delete not permitted"),
    "lift deny_delete": (
        lambda js: js.update_stream(stream_config().evolve(deny_delete=False)),
        "can not cancel deny message deletes",
    ),
    "lift deny_purge": (
        lambda js: js.update_stream(stream_config().evolve(deny_purge=False)),
        "can not cancel deny purge",
    ),
}


@pytest.mark.parametrize("what", list(OPERATOR_CANNOT))
def test_the_operator_cannot_purge_delete_or_lift_the_denial_either(
    store: Store, nats_server: NatsServer, what: str
) -> None:
    one_checkpoint_noted(store, nats_server)
    work, answer = OPERATOR_CANNOT[what]
    said = refused(nats_server, OPERATOR, work)
    assert said.startswith("refused: ") and answer in said
    assert len(checkpoints_in(nats_server)) == 1
