"""Moving a tenant between two PostgreSQL clusters under load (infra/tenant_move.py):
nothing lost or doubled, the fence a few seconds, verify passing on the target, and
the other tenant never disturbed."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from infra.cli import app as casino
from infra.cli import tenant_apps
from infra.cli.tenants import verifier
from infra.config import load_settings
from infra.store.seal import parse_public_key
from infra.tenant_move import MoveRefused, move_tenant
from infra.tenants import load_tenants
from tests.conftest import POSTGRES_URL
from tests.faults.cluster import Cluster
from tests.infra.tenants.conftest import cluster_url, drop_schema, tenant_entry

pytestmark = pytest.mark.postgres
CLIENTS = 4
LOAD_SECONDS_MAX = 60


@pytest.fixture
def directory(
    second_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """alpha and beta on the shared cluster, in a directory file."""
    path = tmp_path / "tenants.json"
    schemas = {name: f"t_{name}_{uuid.uuid4().hex[:12]}" for name in ("alpha", "beta")}
    write(path, {"alpha": POSTGRES_URL, "beta": POSTGRES_URL}, schemas)
    monkeypatch.setenv("CASINO_TENANTS", str(path))
    monkeypatch.setenv("CASINO_PROJECTOR", "inside")
    yield path
    for url in (POSTGRES_URL, cluster_url(second_cluster)):
        with psycopg.connect(url, autocommit=True) as connection:
            found = connection.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE ANY(%s)",
                ([f"{schema}%" for schema in schemas.values()],),
            ).fetchall()
        for (schema,) in found:
            drop_schema(url, schema)


def write(path: Path, places: dict[str, str], schemas: dict[str, str]) -> None:
    entries = {
        name: tenant_entry(name, url, schemas[name], path.parent / f"{name}.jsonl")
        for name, url in places.items()
    }
    path.write_text(json.dumps({"tenants": entries}))


def entry(path: Path, name: str) -> dict[str, Any]:
    entries: dict[str, Any] = json.loads(path.read_text())["tenants"]
    return dict(entries[name])


def public_key(path: Path, name: str) -> str:
    from infra.store.seal import parse_private_key, public_key_text

    return public_key_text(parse_private_key(entry(path, name)["seal_key"]).public_key())


class Load:
    """Clients depositing into one player, each command retried with its own
    Idempotency-Key until it is answered 201, as an upstream cashier does."""

    def __init__(self, client: TestClient, tenant: str) -> None:
        self.client, self.tenant = client, tenant
        self.moving: list[float] = []  # when a 503 tenant_moving was answered
        self.other: list[int] = []  # any other status but 201
        self.landed = 0  # deposits answered 201
        self.stop = threading.Event()

    def run(self, pause: float = 0.02) -> None:
        """Deposits of $1 until told to stop, each retried with its key until 201."""
        given_up = time.monotonic() + LOAD_SECONDS_MAX  # a failed move ends the test
        while not self.stop.is_set() and time.monotonic() < given_up:
            key = uuid.uuid4().hex
            while time.monotonic() < given_up:
                answer = self.client.post(
                    "/v1/players/alice/deposits",
                    json={"mode": "real", "amount": "1.00"},
                    headers={"Authorization": f"Bearer {self.tenant}-service",
                             "Idempotency-Key": key},
                )  # fmt: skip
                if answer.status_code == 201:
                    self.landed += 1  # one thread's increment at a time: the GIL's
                    break
                if answer.status_code == 503 and answer.json()["code"] == "tenant_moving":
                    assert 1 <= int(answer.headers["Retry-After"]) <= 30
                    self.moving.append(time.monotonic())
                else:
                    self.other.append(answer.status_code)
                time.sleep(0.05)
            time.sleep(pause)


def test_a_tenant_moved_under_load_loses_and_doubles_nothing(
    directory: Path, second_cluster: Cluster
) -> None:
    """From the shared cluster (wal_level=replica): pg_dump | pg_restore."""
    report = moved_under_load(directory, cluster_url(second_cluster))
    assert report.method == "pg_dump | pg_restore"


def test_a_move_from_a_cluster_with_logical_wal_replicates(
    directory: Path, second_cluster: Cluster
) -> None:
    """From the second cluster (wal_level=logical): the log's tables replicated."""
    raw = json.loads(directory.read_text())
    raw["tenants"]["alpha"]["database_url"] = cluster_url(second_cluster)
    directory.write_text(json.dumps(raw))
    report = moved_under_load(directory, POSTGRES_URL)
    assert report.method == "logical replication"
    with psycopg.connect(cluster_url(second_cluster), autocommit=True) as connection:
        assert connection.execute("SELECT count(*) FROM pg_publication").fetchone() == (0,)
        slots = connection.execute("SELECT count(*) FROM pg_replication_slots").fetchone()
        assert slots == (0,)  # nothing left to hold the source's WAL
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        subscriptions = connection.execute(
            "SELECT count(*) FROM pg_subscription WHERE subname LIKE 'casino_move_%'"
        ).fetchone()
        assert subscriptions == (0,)


def moved_under_load(directory: Path, target: str) -> Any:
    """alpha moved to `target` while four clients deposit into it and one into beta;
    checks that nothing was lost or doubled and that verify passes on the target."""
    served = tenant_apps(load_tenants(load_settings()))
    with TestClient(served) as client:
        for name in ("alpha", "beta"):
            player = {"player_id": "alice", "display_name": "Alice"}
            headers = {"Authorization": f"Bearer {name}-service", "Idempotency-Key": name}
            assert client.post("/v1/players", json=player, headers=headers).status_code == 201
        alpha, beta = Load(client, "alpha"), Load(client, "beta")
        threads = [threading.Thread(target=alpha.run, daemon=True) for _ in range(CLIENTS)]
        threads.append(threading.Thread(target=beta.run, daemon=True))
        for thread in threads:
            thread.start()
        while alpha.landed < CLIENTS:  # the move starts with deposits landing
            time.sleep(0.01)
        key = parse_public_key(public_key(directory, "alpha"))
        report = move_tenant(directory, "alpha", target, verifier(key))
        landed = alpha.landed
        while alpha.landed < landed + CLIENTS:  # and goes on landing at the target
            time.sleep(0.01)
        for load in (alpha, beta):
            load.stop.set()
        for thread in threads:
            thread.join(timeout=120)
        assert entry(directory, "alpha")["database_url"] == target
        assert "fenced" not in entry(directory, "alpha")
        assert alpha.other == [] and beta.other == [] and beta.moving == []
        seen = (alpha.moving[-1] - alpha.moving[0]) if alpha.moving else 0.0
        assert alpha.moving, "no command met the fence: the move was not under load"
        assert report.fence_seconds < 5 and seen < 5, (report, seen)
        print(f"fence ({report.method}): {report.fence_seconds:.2f} s by the move, "
              f"{seen:.2f} s by the clients; {report.tail_events} events in it; "
              f"{alpha.landed} deposits")  # fmt: skip
        for load in (alpha, beta):
            assert balance(client, load.tenant) == f"{load.landed}.00", load.tenant
        # Reopened at its new place, alpha still asks beta whose a provider id is.
        provider = {"provider_id": "shared", "name": "Shared", "secrets": ["s" * 40],
                    "bonus_allowed": False}  # fmt: skip
        for name, status in (("beta", 201), ("alpha", 409)):
            registered = once_unfenced(client, name, "/v1/providers", provider)
            assert registered.status_code == status, registered.text
    schema = entry(directory, "alpha")["postgres_schema"]
    with psycopg.connect(target) as connection:
        deposits = connection.execute(
            f"SELECT count(*) FROM {schema}.casino_events WHERE topic LIKE '%Deposited%'"
        ).fetchone()
    assert deposits is not None and deposits[0] == alpha.landed
    pinned = public_key(directory, "alpha")
    result = CliRunner().invoke(
        casino, ["--tenant", "alpha", "audit", "verify", "--public-key", pinned]
    )
    assert result.exit_code == 0, result.output
    return report


def once_unfenced(client: TestClient, tenant: str, path: str, body: dict[str, Any]) -> Any:
    """An operator's command, sent again while the tenant's fence still stands (the
    servers lift it at their next look at the directory, a moment after the move)."""
    headers = {"Authorization": f"Bearer {tenant}-operator", "Idempotency-Key": tenant}
    for _ in range(100):
        answer = client.post(path, json=body, headers=headers)
        if answer.status_code != 503:
            break
        assert answer.json()["code"] == "tenant_moving"
        time.sleep(0.05)
    return answer


def balance(client: TestClient, tenant: str) -> str:
    """The wallet's balance, once the tenant is open at its new place (a moment after
    the move: until then its requests are 503 tenant_moving)."""
    headers = {"Authorization": f"Bearer {tenant}-service"}
    for _ in range(100):
        answer = client.get("/v1/players/alice/wallets/real", headers=headers)
        if answer.status_code != 503:
            break
        assert answer.json()["code"] == "tenant_moving"
        time.sleep(0.05)
    assert answer.status_code == 200, answer.text
    found: str = answer.json()["balance"]
    return found


def test_a_move_to_where_the_tenant_is_or_a_taken_schema_is_refused(
    directory: Path, second_cluster: Cluster
) -> None:
    tenant_apps(load_tenants(load_settings()))  # the stores made, as serve makes them
    key = parse_public_key(public_key(directory, "alpha"))
    with pytest.raises(MoveRefused, match="in that database already"):
        move_tenant(directory, "alpha", POSTGRES_URL, verifier(key))
    schema = entry(directory, "alpha")["postgres_schema"]
    with psycopg.connect(cluster_url(second_cluster), autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    with pytest.raises(MoveRefused, match="has a schema"):
        move_tenant(directory, "alpha", cluster_url(second_cluster), verifier(key))
    assert entry(directory, "alpha")["database_url"] == POSTGRES_URL


def test_a_move_needs_the_directory_in_a_file(directory: Path) -> None:
    arguments = ["tenants", "move", "alpha", "--to", POSTGRES_URL, "--public-key", "x"]
    inline = {"CASINO_TENANTS": directory.read_text()}
    result = CliRunner().invoke(casino, arguments, env=inline)
    assert result.exit_code == 2
    assert "must be a file" in result.output
