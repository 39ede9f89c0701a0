"""A NATS server of the tests' own: Debian's nats-server on a free port, JetStream
in a directory of its own, three users as docs/witness.md deploys them, and the
witness stream made by the witness operator, as the operator would make it.

Never the machine's shared server on 4222. Where nats-server is not installed its
tests are skipped, unless CASINO_REQUIRE_NATS=1 (set by CI), which fails them.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import nats
import pytest
from nats.aio.client import Client
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig

from infra.checkpoints.jetstream import inbox_prefix

NATS_SERVER = Path("/usr/sbin/nats-server")
REQUIRED = os.environ.get("CASINO_REQUIRE_NATS") == "1"
STREAM = "CASINO"
SUBJECT = f"casino.witness.{STREAM}"
OPERATOR, SERVICE, AUDITOR = "witness", "casino", "auditor"
PASSWORDS = {OPERATOR: "operator-secret", SERVICE: "service-secret", AUDITOR: "auditor-secret"}
START_SECONDS = 10.0
T = TypeVar("T")


def service_permissions(stream: str = STREAM) -> dict[str, list[str]]:
    """The service's: publish its checkpoints, read the stream's messages; replies
    come to its own inbox. Nothing else (docs/witness.md)."""
    return {
        "publish": [f"casino.witness.{stream}", f"$JS.API.STREAM.MSG.GET.{stream}"],
        "subscribe": [f"{inbox_prefix(SERVICE)}.>"],
    }


def auditor_permissions(stream: str = STREAM) -> dict[str, list[str]]:
    """The auditor's: read the stream's messages, nothing else."""
    return {
        "publish": [f"$JS.API.STREAM.MSG.GET.{stream}"],
        "subscribe": [f"{inbox_prefix(AUDITOR)}.>"],
    }


def stream_config(stream: str = STREAM) -> StreamConfig:
    """The witness stream as its operator makes it (docs/witness.md)."""
    return StreamConfig(
        name=stream,
        subjects=[f"casino.witness.{stream}"],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        discard=DiscardPolicy.NEW,  # full: refuse new checkpoints, never drop old ones
        max_msgs=-1,
        max_bytes=-1,
        max_age=0,
        max_msgs_per_subject=-1,
        deny_delete=True,
        deny_purge=True,
        allow_rollup_hdrs=False,
        duplicate_window=120,
    )


def _allow(permissions: dict[str, list[str]]) -> str:
    """`{publish: {allow: [...]}, subscribe: {allow: [...]}}`, as nats-server reads it."""
    lists = (f"{kind}: {{allow: {json.dumps(subjects)}}}" for kind, subjects in permissions.items())
    return "{" + ", ".join(lists) + "}"


def server_config(port: int, directory: Path, service: dict[str, list[str]]) -> str:
    users = [
        f'{{user: "{OPERATOR}", password: "{PASSWORDS[OPERATOR]}"}}',
        f'{{user: "{SERVICE}", password: "{PASSWORDS[SERVICE]}", permissions: {_allow(service)}}}',
        f'{{user: "{AUDITOR}", password: "{PASSWORDS[AUDITOR]}", '
        f"permissions: {_allow(auditor_permissions())}}}",
    ]
    return (
        f"listen: 127.0.0.1:{port}\n"
        f'jetstream {{ store_dir: "{directory / "jetstream"}" }}\n'
        "authorization {\n  users = [\n    " + "\n    ".join(users) + "\n  ]\n}\n"
    )


class NatsServer:
    def __init__(self, directory: Path, service: dict[str, list[str]] | None = None) -> None:
        self.directory = directory
        self.port = _free_port()
        self.config = directory / "nats-server.conf"
        permissions = service if service is not None else service_permissions()
        self.config.write_text(server_config(self.port, directory, permissions))
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, user: str = SERVICE, stream: str = STREAM) -> str:
        return f"nats://{user}:{PASSWORDS[user]}@127.0.0.1:{self.port}/{stream}"

    def start(self) -> None:
        log = (self.directory / "nats-server.log").open("ab")
        self.process = subprocess.Popen(
            [str(NATS_SERVER), "-c", str(self.config)], stdout=log, stderr=log
        )
        deadline = time.monotonic() + START_SECONDS
        while not _listening(self.port):
            assert self.process.poll() is None, f"nats-server stopped: see {log.name}"
            assert time.monotonic() < deadline, "nats-server did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def as_user(
        self,
        user: str,
        work: Callable[[Client], Awaitable[T]],
        heard: Callable[[Exception], Awaitable[None]] | None = None,
    ) -> T:
        """Run `work` on a connection of `user`'s (its own inbox, as the service's);
        `heard` is told what the server complains of (a permission refused)."""

        async def connected() -> T:
            connection = await nats.connect(
                f"nats://{user}:{PASSWORDS[user]}@127.0.0.1:{self.port}",
                inbox_prefix=inbox_prefix(user),
                allow_reconnect=False,
                error_cb=heard or _quiet,
            )
            try:
                return await work(connection)
            finally:
                await connection.close()

        return asyncio.run(connected())

    def make_stream(self, config: StreamConfig | None = None) -> None:
        chosen = config or stream_config()

        async def make(connection: Client) -> None:
            await connection.jetstream().add_stream(chosen)

        self.as_user(OPERATOR, make)

    def records(self, stream: str = STREAM) -> list[bytes]:
        """Every message of the stream, as the operator reads it."""

        async def read(connection: Client) -> list[bytes]:
            manager = connection.jetstream()
            state = (await manager.stream_info(stream)).state
            found: list[bytes] = []
            if not state.messages:
                return found  # an empty stream's first sequence is 0, which none has
            for sequence in range(state.first_seq, state.last_seq + 1):
                message = await manager.get_msg(stream, seq=sequence)
                found.append(message.data or b"")
            return found

        return self.as_user(OPERATOR, read)


async def _quiet(error: Exception) -> None:
    """The server's complaints (a permission refused) are what these tests provoke."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def nats_server_or_skip() -> None:
    if NATS_SERVER.is_file():
        return
    if REQUIRED:
        pytest.fail(f"{NATS_SERVER} is required (CASINO_REQUIRE_NATS=1): make nats-server")
    pytest.skip(f"{NATS_SERVER} is not installed (apt-get install nats-server)")
