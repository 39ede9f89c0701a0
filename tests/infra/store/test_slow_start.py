"""A database slow to let a new process in delays the store's start, not its first command.

Between the store and PostgreSQL sits a proxy that holds every connection after the
first for longer than a command waits for a connection (5 s): as a database under a
heavy load, or behind a slow network, might. The store waits for its pools at start
(infra/store/factory.py, infra/store/database.py: open_waiting), so the first command
finds its connections ready.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urlparse

import psycopg
import pytest

from infra.store.store import POSTGRES_TIMEOUT_SECONDS, open_store
from tests.conftest import POSTGRES_URL

HELD_SECONDS = POSTGRES_TIMEOUT_SECONDS + 1.5


class SlowProxy:
    """Forwards TCP to PostgreSQL; connections after the first `prompt` are held first."""

    def __init__(self, prompt: int = 1) -> None:
        target = urlparse(POSTGRES_URL)
        self.target = (target.hostname or "127.0.0.1", target.port or 5432)
        self.prompt = prompt
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        return POSTGRES_URL.replace(
            f"{self.target[0]}:{self.target[1]}", f"127.0.0.1:{self.port}", 1
        )

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            self.accepted += 1
            held = self.accepted > self.prompt
            threading.Thread(target=self._forward, args=(client, held), daemon=True).start()

    def _forward(self, client: socket.socket, held: bool) -> None:
        if held:
            time.sleep(HELD_SECONDS)
        server = socket.create_connection(self.target)
        self.open += [client, server]
        for source, sink in ((client, server), (server, client)):
            threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        for connection in self.open:
            connection.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass  # one side closed
    finally:
        for side in (source, sink):
            with contextlib.suppress(OSError):  # already shut
                side.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def slow_proxy(postgres_up: bool) -> Iterator[SlowProxy]:
    if not postgres_up:
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} is not reachable")
    proxy = SlowProxy()
    yield proxy
    proxy.close()


@pytest.mark.postgres
def test_a_store_opened_on_a_slow_database_answers_its_first_command(
    slow_proxy: SlowProxy,
) -> None:
    schema = f"t_{uuid.uuid4().hex[:16]}"
    started = time.monotonic()
    store = open_store(slow_proxy.url(), postgres_schema=schema, pool_size=2)
    try:
        assert time.monotonic() - started >= HELD_SECONDS  # it waited for the pool
        store.app.register_player("alice", "Alice")
        store.app.deposit("alice", "real", 1500)
        assert store.app.wallet("alice", "real").balance_cents == 1500
        assert slow_proxy.accepted > slow_proxy.prompt  # the held connections served it
    finally:
        store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]
