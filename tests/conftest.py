"""Shared fixtures: every store-backed test runs on SQLite and on PostgreSQL.

PostgreSQL comes from CASINO_TEST_DATABASE_URL (default: the local `test`
database). Each test gets a schema of its own, dropped afterwards. Where
PostgreSQL cannot be reached its tests are skipped, unless
CASINO_REQUIRE_POSTGRES=1 (set by CI), which turns that into a failure.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi.testclient import TestClient

from domain.settings import GameSettings
from infra.config import load_settings
from infra.fault_log import faults
from infra.http.app import create_app
from infra.store.seal import private_key_text, public_key_text
from infra.store.store import Store, open_store
from tests.contract import ContractClient

POSTGRES_URL = os.environ.get(
    "CASINO_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
POSTGRES_REQUIRED = os.environ.get("CASINO_REQUIRE_POSTGRES") == "1"

SERVICE = {"Authorization": "Bearer dev-service"}
OPERATOR = {"Authorization": "Bearer dev-operator"}
AUDITOR = {"Authorization": "Bearer dev-auditor"}
# Every test store seals its saves and signs its snapshots with this key.
SEAL_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
# What a process of the service started by a test is configured with, to save on a
# test store: its seal key, and a key for round seeds (no development keys made).
SERVICE_KEYS = {
    "CASINO_SEAL_KEY": private_key_text(SEAL_KEY),
    "CASINO_SECRET_KEY": "0" * 64,
}


def _postgres_available() -> bool:
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


@pytest.fixture(autouse=True)
def own_witness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's server notes its seals in a witness file of its own, not in ./var/."""
    monkeypatch.setenv("CASINO_WITNESS", str(tmp_path / "witness.jsonl"))


@pytest.fixture(autouse=True)
def patient_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request deadline a loaded test machine never meets by accident: the tests of
    the deadline set their own (tests/infra/http/test_deadline.py, tests/faults)."""
    monkeypatch.setenv("CASINO_REQUEST_DEADLINE_SECONDS", "30")


@pytest.fixture(autouse=True)
def no_fault_left_over() -> None:
    """Each test's faults are logged as a new process would log them: a cause left
    failing by an earlier test would otherwise make this one's first failure a
    continuation (infra/fault_log.py keeps one log per process)."""
    faults.forget()


@pytest.fixture(autouse=True)
def pinned_auditor_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """`casino audit verify` run by a test checks seals with the test stores' key, as
    an auditor's pinned key: never with whatever development key ./var/ may hold."""
    monkeypatch.setenv("CASINO_AUDITOR_PUBLIC_KEY", public_key_text(SEAL_KEY.public_key()))


@pytest.fixture(scope="session")
def postgres_up() -> bool:
    available = _postgres_available()
    if POSTGRES_REQUIRED and not available:
        pytest.fail(
            f"PostgreSQL is required (CASINO_REQUIRE_POSTGRES=1) but {POSTGRES_URL} is down"
        )
    return available


class StoreFactory:
    """Opens stores on one backend; the same place twice means 'restart the app'."""

    def __init__(self, backend: str, tmp_path: Path) -> None:
        self.backend = backend
        self.tmp_path = tmp_path
        self.schema = f"t_{uuid.uuid4().hex[:16]}"
        self.opened: list[Store] = []

    @property
    def url(self) -> str:
        if self.backend == "sqlite":
            return f"sqlite:///{self.tmp_path / 'casino.sqlite'}"
        return POSTGRES_URL

    def open(self, games: GameSettings | None = None) -> Store:
        # Certification mode is on by default here, so tests can choose the cards.
        games = games or GameSettings(test_mode=True)
        store = open_store(
            self.url, postgres_schema=self.schema, pool_size=2, games=games, seal_key=SEAL_KEY
        )
        self.opened.append(store)
        return store

    def close(self, store: Store) -> None:
        self.opened.remove(store)
        store.close()

    def close_all(self) -> None:
        for store in self.opened:
            store.close()
        if self.backend == "postgres":
            with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
                connection.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    if request.param == "postgres" and not request.getfixturevalue("postgres_up"):
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} is not reachable")
    factory = StoreFactory(request.param, tmp_path)
    yield factory
    factory.close_all()


@pytest.fixture
def postgres_stores(postgres_up: bool, tmp_path: Path) -> Iterator[StoreFactory]:
    """Stores on PostgreSQL only, for what only PostgreSQL does."""
    if not postgres_up:
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} is not reachable")
    factory = StoreFactory("postgres", tmp_path)
    yield factory
    factory.close_all()


@pytest.fixture
def store(stores: StoreFactory) -> Store:
    return stores.open()


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    settings = load_settings(database_url=store.url)
    # Every answer is checked against the OpenAPI document (tests/contract.py).
    with ContractClient(create_app(store, settings, background=False)) as test_client:
        yield test_client


class Api:
    """A caller of the HTTP API that supplies fresh idempotency keys."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def post(
        self,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        key: str | None = None,
    ) -> Any:
        sent = {**SERVICE, "Idempotency-Key": key or uuid.uuid4().hex, **(headers or {})}
        return self.client.post(path, json=body, headers=sent)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Any:
        return self.client.get(path, headers=headers or SERVICE)

    def player(self, player_id: str = "alice", real: str | None = None) -> str:
        assert (
            self.post(
                "/v1/players", {"player_id": player_id, "display_name": player_id}
            ).status_code
            == 201
        )
        if real is not None:
            self.deposit(player_id, real)
        return player_id

    def deposit(self, player_id: str, amount: str, mode: str = "real") -> Any:
        answer = self.post(f"/v1/players/{player_id}/deposits", {"mode": mode, "amount": amount})
        assert answer.status_code == 201, answer.text
        return answer.json()

    def wallet(self, player_id: str, mode: str = "real") -> dict[str, Any]:
        answer = self.get(f"/v1/players/{player_id}/wallets/{mode}")
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def trial_balance(self, mode: str = "real") -> dict[str, Any]:
        answer = self.get(f"/v1/reports/trial-balance?mode={mode}", headers=OPERATOR)
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result


@pytest.fixture
def api(client: TestClient) -> Api:
    return Api(client)


def seat_p2p_table(app: Any, table_type: str = "I", auto_confirm: bool = False) -> str:
    """Dealer dan and player pat, each with $5,000, at a P2P table; its id."""
    for name in ("dan", "pat"):
        app.register_player(name, name)
        app.deposit(name, "real", 500_000)
    app.adjust_points("dan", "real", 100, "qualifies")
    table = app.sit_as_dealer("dan", "real", table_type, auto_confirm).result
    assert table is not None
    app.join_as_player("pat", "real", table_type)
    return str(table.table_id)


def every_store_event(store: Store) -> list[Any]:
    notifications = store.app.recorder.select_notifications(start=1, limit=1_000_000)
    return [store.app.mapper.to_domain_event(n) for n in notifications]


T = TypeVar("T")


def eventually(read: Callable[[], T], done: Callable[[T], bool], seconds: float = 5) -> T:
    """What `read` gives once `done` holds of it, for what lands just after an answer
    (a significant event its own thread writes); the last reading if it never does."""
    deadline = time.monotonic() + seconds
    while not done(value := read()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return value


OpenStore = Callable[[], Store]
