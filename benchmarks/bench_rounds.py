"""Baccarat rounds settled per second: house and P2P, through the application on both
stores, and P2P through real HTTP (`casino serve` in its own process, one client on
loopback)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psycopg

from infra.logs import configure_logging
from infra.store.store import Store, open_store

POSTGRES_URL = os.environ.get(
    "CASINO_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "400"))
SERVER_START_SECONDS_MAX = 30


def sqlite_opener(directory: str) -> Callable[[], Store]:
    return lambda: open_store(f"sqlite:///{Path(directory) / f'{uuid.uuid4().hex}.db'}")


def postgres_opener(schemas: list[str]) -> Callable[[], Store]:
    def open_fresh() -> Store:
        schemas.append(f"bench_{uuid.uuid4().hex[:8]}")
        return open_store(POSTGRES_URL, postgres_schema=schemas[-1])

    return open_fresh


def house_rounds_per_second(store: Store) -> float:
    app = store.app
    app.register_player("bench", "bench")
    app.deposit("bench", "real", 10_000_000_00)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        round_ = app.open_house_round("bench", "real").result
        assert round_ is not None
        app.place_bet(round_.round_id, "banker", 1000)
        app.deal(round_.round_id)
    return ROUNDS / (time.perf_counter() - started)


def seat_p2p(store: Store) -> str:
    app = store.app
    for name in ("dealer", "player"):
        app.register_player(name, name)
        app.deposit(name, "real", 10_000_000_00)
    app.adjust_points("dealer", "real", 1_000_000, "bench")
    table = app.sit_as_dealer("dealer", "real", "II", auto_confirm=False).result
    assert table is not None
    app.join_as_player("player", "real", "II")
    return table.table_id


def p2p_rounds_per_second(store: Store) -> float:
    app, table_id = store.app, seat_p2p(store)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        round_ = app.confirm(table_id).result
        assert round_ is not None
        app.place_bet(round_.round_id, "player", 1000)
        app.deal(round_.round_id)
    return ROUNDS / (time.perf_counter() - started)


def p2p_rounds_per_second_over_http(store: Store) -> float:
    table_id = seat_p2p(store)
    with serving(store) as base, httpx.Client(base_url=base) as client:

        def post(path: str, body: object = None) -> dict[str, object]:
            headers = {"Authorization": "Bearer dev-service", "Idempotency-Key": uuid.uuid4().hex}
            answer = client.post(path, json=body, headers=headers)
            assert answer.status_code in (200, 201), answer.text
            result: dict[str, object] = answer.json()
            return result

        started = time.perf_counter()
        for _ in range(ROUNDS):
            round_id = post(f"/v1/p2p/tables/{table_id}/confirm")["round_id"]
            post(f"/v1/rounds/{round_id}/bets", {"spot": "player", "amount": "10.00"})
            post(f"/v1/rounds/{round_id}/deal")
        return ROUNDS / (time.perf_counter() - started)


@contextlib.contextmanager
def serving(store: Store) -> Iterator[str]:
    """`casino serve` in a process of its own, on the store's database, as deployed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "CASINO_DATABASE_URL": store.url,
        "CASINO_POSTGRES_SCHEMA": store.postgres_schema,
        "CASINO_LOG_LEVEL": "warning",
    }
    command = [sys.executable, "-m", "infra.cli", "serve", "--port", str(port)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_until_up(base: str) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS_MAX
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base}/openapi.json").status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the server at {base} did not start")


def run() -> dict[str, float]:
    configure_logging("warning")  # One line per request would drown the figures.
    figures: dict[str, float] = {}
    schemas: list[str] = []
    with tempfile.TemporaryDirectory() as directory:
        try:
            for name, open_fresh in (
                ("sqlite", sqlite_opener(directory)),
                ("postgres", postgres_opener(schemas)),
            ):
                for label, measure in MEASURES:
                    store = open_fresh()
                    figures[f"{name}_{label}"] = measure(store)
                    store.close()
        finally:
            drop_schemas(schemas)
    return figures


def drop_schemas(schemas: list[str]) -> None:
    """The PostgreSQL schemas a benchmark made, gone."""
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        for schema in schemas:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]


MEASURES = (
    ("house_rounds_per_s", house_rounds_per_second),
    ("p2p_rounds_per_s", p2p_rounds_per_second),
    ("p2p_rounds_over_http_per_s", p2p_rounds_per_second_over_http),
)


if __name__ == "__main__":
    for figure, value in run().items():
        print(f"{figure:45s} {value:10.1f}")
