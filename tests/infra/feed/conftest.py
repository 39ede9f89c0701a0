"""The NATS server of the feed's tests (nats_server.py), with the stream created."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.feed.nats_server import NatsServer, require_nats_server


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    require_nats_server()
    server = NatsServer(tmp_path / "nats")
    server.start()
    try:
        server.create_stream()
        yield server
    finally:
        server.stop()
