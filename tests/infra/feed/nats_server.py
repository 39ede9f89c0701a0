"""A NATS server of the tests' own: Debian's nats-server (v2.9) on a free port of the
loopback, JetStream on, its store in the test's directory, and two users - `admin`,
who creates the stream as a deployment does, and `relay`, with only the permissions
docs/feed.md gives the relay. Never the machine's shared server on 4222.

Where nats-server is not installed its tests are skipped, unless
CASINO_REQUIRE_NATS=1 (CI), which makes that a failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import nats
import pytest
from nats.js.api import StreamConfig

from infra.feed.target import SUBJECT_PREFIX

NATS_SERVER = Path("/usr/sbin/nats-server")
STREAM = "CASINO"
ADMIN_PASSWORD = "admin-password"
RELAY_PASSWORD = "relay-password"
DUPLICATE_WINDOW_SECONDS = 120.0
START_SECONDS = 10.0
T = TypeVar("T")


def relay_permissions(stream: str) -> dict[str, Any]:
    """What docs/feed.md gives the relay's user: publish to the feed's subject, read the
    stream's last message and its state, and receive the answers."""
    return {
        "publish": {
            "allow": [
                SUBJECT_PREFIX + stream,
                f"$JS.API.STREAM.MSG.GET.{stream}",
                f"$JS.API.STREAM.INFO.{stream}",
            ]
        },
        "subscribe": {"allow": ["_INBOX.>"]},
    }


@dataclass(frozen=True)
class Message:
    sequence: int
    msg_id: str
    event: dict[str, Any]


class NatsServer:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.config = directory / "nats-server.conf"
        users = [
            {"user": "admin", "password": ADMIN_PASSWORD},
            {"user": "relay", "password": RELAY_PASSWORD, "permissions": relay_permissions(STREAM)},
        ]
        self.config.write_text(
            f"listen: 127.0.0.1:{self.port}\n"
            f"jetstream {{ store_dir: {json.dumps(str(directory / 'jetstream'))} }}\n"
            f"authorization {{ users: {json.dumps(users)} }}\n"
        )

    def feed(self, password: str = RELAY_PASSWORD, stream: str = STREAM) -> str:
        """CASINO_FEED for the relay's user."""
        return f"nats://relay:{password}@127.0.0.1:{self.port}/{stream}"

    def start(self) -> None:
        log = (self.directory / "nats-server.log").open("ab")
        self.process = subprocess.Popen([str(NATS_SERVER), "-c", str(self.config)], stdout=log,
                                        stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while not _accepts(self.port):
            assert self.process.poll() is None, f"nats-server stopped: see {log.name}"
            assert time.monotonic() < deadline, "nats-server did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def create_stream(self, window_seconds: float = DUPLICATE_WINDOW_SECONDS) -> None:
        """The stream as docs/feed.md has a deployment create it."""
        config = StreamConfig(
            name=STREAM,
            subjects=[SUBJECT_PREFIX + STREAM],
            duplicate_window=window_seconds,
            deny_delete=True,
            deny_purge=True,
        )
        self._admin(lambda js: js.add_stream(config))

    def messages(self) -> list[Message]:
        """Every message of the stream, in order, as a consumer reads them."""
        return self._admin(_read_all)

    def _admin(self, work: Any) -> Any:
        async def run() -> Any:
            connection = await nats.connect(
                f"nats://admin:{ADMIN_PASSWORD}@127.0.0.1:{self.port}", allow_reconnect=False
            )
            try:
                return await work(connection.jetstream(timeout=5))
            finally:
                await connection.close()

        return _run(run())


async def _read_all(js: Any) -> list[Message]:
    info = await js.stream_info(STREAM)
    if not info.state.messages:
        return []
    found = []
    for sequence in range(info.state.first_seq, info.state.last_seq + 1):
        message = await js.get_msg(STREAM, seq=sequence)
        headers = message.headers or {}
        found.append(Message(sequence, headers["Nats-Msg-Id"], json.loads(message.data)))
    return found


def _run(work: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(work)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def require_nats_server() -> None:
    if NATS_SERVER.exists():
        return
    if os.environ.get("CASINO_REQUIRE_NATS") == "1":
        pytest.fail(
            f"{NATS_SERVER} is required (CASINO_REQUIRE_NATS=1): apt-get install nats-server"
        )
    pytest.skip(f"{NATS_SERVER} is not installed (apt-get install nats-server)")
