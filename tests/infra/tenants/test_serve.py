"""`casino serve` with a tenant directory: one process serving two tenants, as deployed."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.infra.store.test_crash_recovery import CASINO, Server
from tests.infra.tenants.conftest import tenant_entry


def write_directory(folder: Path, **changes: dict[str, object]) -> Path:
    entries = {
        name: {**tenant_entry(name, f"sqlite:///{folder / name}.sqlite", name,
                              folder / f"{name}.jsonl"), **changes.get(name, {})}
        for name in ("alpha", "beta")
    }  # fmt: skip
    path = folder / "tenants.json"
    path.write_text(json.dumps({"tenants": entries}))
    return path


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    env = {**os.environ, "CASINO_TENANTS": str(write_directory(tmp_path))}
    served = Server(env, tmp_path)
    served.start()
    yield served
    served.close()


def key(tenant: str, role: str = "service") -> dict[str, str]:
    return {"Authorization": f"Bearer {tenant}-{role}"}


def test_one_process_serves_two_tenants_each_its_own_books(server: Server) -> None:
    for tenant, amount in (("alpha", "12.00"), ("beta", "34.00")):
        player = {"player_id": "alice", "display_name": "Alice"}
        headers = {**key(tenant), "Idempotency-Key": f"{tenant}-1"}
        assert (
            httpx.post(f"{server.base}/v1/players", json=player, headers=headers).status_code == 201
        )
        body = {"mode": "real", "amount": amount}
        headers = {**key(tenant), "Idempotency-Key": f"{tenant}-2"}
        deposited = httpx.post(
            f"{server.base}/v1/players/alice/deposits", json=body, headers=headers
        )
        assert deposited.status_code == 201
    for tenant, amount in (("alpha", "12.00"), ("beta", "34.00")):
        wallet = httpx.get(f"{server.base}/v1/players/alice/wallets/real", headers=key(tenant))
        assert wallet.json()["balance"] == amount
    assert httpx.get(f"{server.base}/v1/players/alice", headers=key("dev")).status_code == 401
    ready = httpx.get(f"{server.base}/v1/health/ready")
    assert ready.status_code == 200, ready.text
    names = {check["name"] for check in ready.json()["checks"]}
    assert {"alpha/start", "beta/start", "alpha/workers", "beta/workers"} <= names
    metrics = httpx.get(f"{server.base}/metrics").text
    assert 'casino_saves_total{tenant="beta"}' in metrics


def test_each_tenants_log_verifies_with_its_own_key_after_serving(
    server: Server, tmp_path: Path
) -> None:
    player = {"player_id": "alice", "display_name": "Alice"}
    headers = {**key("alpha"), "Idempotency-Key": "a-1"}
    assert httpx.post(f"{server.base}/v1/players", json=player, headers=headers).status_code == 201
    server.close()  # its last checkpoints noted on each tenant's witness
    from infra.store.seal import parse_private_key, public_key_text

    entries = json.loads((tmp_path / "tenants.json").read_text())["tenants"]
    for tenant, entry in entries.items():
        pinned = public_key_text(parse_private_key(entry["seal_key"]).public_key())
        verify = [*CASINO, "--tenant", tenant, "audit", "verify", "--public-key", pinned]
        result = subprocess.run(
            verify, env=server.env, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "witness" in result.stdout


def test_an_api_key_of_two_tenants_stops_the_start(tmp_path: Path) -> None:
    shared = {"beta": {"api_keys": {"service": "alpha-service"}}}
    env = {**os.environ, "CASINO_TENANTS": str(write_directory(tmp_path, **shared))}
    result = subprocess.run(
        [*CASINO, "serve", "--port", "1"], env=env, cwd=tmp_path, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert "alpha and beta share an API key" in result.stderr
