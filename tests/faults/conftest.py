"""The fault suite's fixtures: a PostgreSQL cluster of its own, a real `casino serve`
on a fresh database of it per case, and the table of figures printed at the end."""

from __future__ import annotations

import os
import pwd
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import POSTGRES_REQUIRED
from tests.faults.cluster import Cluster, postgres_binaries
from tests.faults.figures import Figures, table
from tests.infra.checkpoints.nats_server import NatsServer, nats_server_or_skip
from tests.infra.store.test_crash_recovery import Server

# Short, so a stall outlasts it quickly (RULES.md 8's default is 5 s).
DEADLINE_SECONDS = 2
FIGURES = pytest.StashKey[list[Figures]]()


def _why_no_cluster() -> str | None:
    if postgres_binaries() is None:
        return "initdb is not installed"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "runuser is missing: initdb cannot run as the postgres user"
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "there is no postgres user to run initdb as"
    return None


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    """A cluster of the suite's own: it is restarted and its connections are ended."""
    why = _why_no_cluster()
    if why is not None:
        if POSTGRES_REQUIRED:
            pytest.fail(f"PostgreSQL is required (CASINO_REQUIRE_POSTGRES=1) but {why}")
        pytest.skip(f"the fault suite needs a PostgreSQL cluster of its own: {why}")
    binaries = postgres_binaries()
    assert binaries is not None
    Cluster.remove_orphans(binaries)
    made = Cluster(binaries)
    try:
        made.create()
        yield made
    finally:
        made.remove()


@dataclass
class Service:
    """`casino serve` on a database of its own, and what it runs with."""

    database: str
    env: dict[str, str]
    workdir: Path
    server: Server

    @property
    def base(self) -> str:
        return self.server.base

    @property
    def pid(self) -> int:
        assert self.server.process is not None
        return self.server.process.pid

    def exit_code(self) -> int | None:
        """None while the server runs."""
        assert self.server.process is not None
        return self.server.process.poll()


@pytest.fixture
def service(cluster: Cluster, tmp_path: Path) -> Iterator[Service]:
    """A server as deployed on PostgreSQL: its projector in a process beside it; the
    dev keys, seal key and witness file under the case's own directory."""
    yield from _served(cluster, tmp_path, str(tmp_path / "witness.jsonl"))


@pytest.fixture
def witness_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A NATS server of the case's own, its witness stream made by its operator."""
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


@pytest.fixture
def witnessed_service(
    cluster: Cluster, tmp_path: Path, witness_server: NatsServer
) -> Iterator[Service]:
    """A server whose witness is a JetStream stream, as production wants it."""
    yield from _served(cluster, tmp_path, witness_server.url())


def _served(cluster: Cluster, tmp_path: Path, witness: str) -> Iterator[Service]:
    database = cluster.new_database("faults")
    env = {name: value for name, value in os.environ.items() if not name.startswith("CASINO_")}
    env.update(
        CASINO_DATABASE_URL=cluster.url(database),
        CASINO_WITNESS=witness,
        CASINO_LOG_LEVEL="warning",  # what went wrong, not a line per request
        CASINO_REQUEST_DEADLINE_SECONDS=str(DEADLINE_SECONDS),
    )
    server = Server(env, tmp_path)
    try:
        server.start()
        assert httpx.get(f"{server.base}/v1/health/live", timeout=5).status_code == 200
        yield Service(database, env, tmp_path, server)
    finally:
        server.close()


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[Figures]:
    """Each case adds its figures here; the table of them ends the run."""
    return request.config.stash.setdefault(FIGURES, [])


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    rows = config.stash.get(FIGURES, [])
    if not rows:
        return
    terminalreporter.section("faults (issue 36): what each case saw")
    for line in table(rows):
        terminalreporter.write_line(line)
