"""A NATS server of the test's own, with the witness stream made by its operator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.checkpoints.nats_server import NatsServer, nats_server_or_skip


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    nats_server_or_skip()
    directory = tmp_path / "nats"
    directory.mkdir()
    server = NatsServer(directory)
    server.start()
    try:
        server.make_stream()
        yield server
    finally:
        server.stop()
