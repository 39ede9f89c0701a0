"""`casino serve` as deployed: one process on SQLite; on PostgreSQL, several server
processes (`--workers`) with the projector in a process of its own beside them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from typer.testing import CliRunner

from infra.cli import app
from tests.conftest import StoreFactory
from tests.infra.store.test_crash_recovery import free_port

START_SECONDS_MAX = 60
SERVICE = {"Authorization": "Bearer dev-service"}


@contextlib.contextmanager
def serving(stores: StoreFactory, *options: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {name: value for name, value in os.environ.items() if not name.startswith("CASINO_")}
    env.update(
        CASINO_DATABASE_URL=stores.url,
        CASINO_POSTGRES_SCHEMA=stores.schema,
        CASINO_LOG_LEVEL="warning",
        PYTHONPATH=str(Path(__file__).parents[2]),
    )
    command = [sys.executable, "-m", "infra.cli", "serve", "--port", str(port), *options]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS_MAX
        while not _answers(base):
            assert server.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield base, server
    finally:
        server.kill()
        server.wait(timeout=30)


def _answers(base: str) -> bool:
    with contextlib.suppress(httpx.TransportError):
        return httpx.get(f"{base}/v1/health/live").status_code == 200
    return False


def children_of(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie (dead, not yet reaped by its parent) is gone too.
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_every_read_of_a_served_store_includes_the_commands_answered_before_it(
    stores: StoreFactory,
) -> None:
    # Given a server as started by default: on PostgreSQL, with two server processes
    # (the projector then runs in a process of its own); on SQLite, one.
    postgres = stores.backend == "postgres"
    options = ("--workers", "2") if postgres else ()
    with serving(stores, *options) as (base, server), httpx.Client(base_url=base) as client:
        # When a player is registered and deposits, and the ledger (a read model) is
        # read at once (no min_position: the read need not know where the deposit landed)
        for n, (path, body) in enumerate(
            (
                ("/v1/players", {"player_id": "alice", "display_name": "Alice"}),
                ("/v1/players/alice/deposits", {"mode": "real", "amount": "12.50"}),
            )
        ):
            answer = client.post(path, json=body, headers={**SERVICE, "Idempotency-Key": f"k{n}"})
            assert answer.status_code == 201, answer.text
        for _ in range(5):  # each read may reach either server process
            ledger = client.get("/v1/players/alice/ledger?mode=real", headers=SERVICE)
            # Then it shows the deposit
            assert ledger.status_code == 200, ledger.text
            assert [entry["amount"] for entry in ledger.json()["entries"]] == ["12.50"]
        health = client.get("/v1/health").json()
        assert health["projections"]["runs"] == ("separate" if postgres else "inside")
        children = children_of(server.pid)
        projectors = [pid for pid in children if "projections run" in command_line(pid)]
        serving_processes = [pid for pid in children if "spawn_main" in command_line(pid)]
        assert len(projectors) == (1 if postgres else 0)
        assert len(serving_processes) == (2 if postgres else 0)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    # And a killed server leaves no projector nor server process of its behind.
    deadline = time.monotonic() + 20
    while not all(gone(pid) for pid in children):
        left = [command_line(pid)[:120] for pid in children if not gone(pid)]
        assert time.monotonic() < deadline, f"processes outlived their server: {left}"
        time.sleep(0.05)


def test_several_server_processes_are_refused_on_sqlite(tmp_path: Path) -> None:
    env = {"CASINO_DATABASE_URL": f"sqlite:///{tmp_path / 'casino.sqlite'}"}
    result = CliRunner().invoke(app, ["serve", "--workers", "2"], env=env)
    assert result.exit_code == 2
    assert "--workers above 1 needs PostgreSQL" in result.output
    assert not (tmp_path / "casino.sqlite").exists()  # refused before anything was made


def test_server_processes_are_bounded() -> None:
    result = CliRunner().invoke(app, ["serve", "--workers", "33"])
    assert result.exit_code == 2
    assert "less than or equal to 32" in result.output
