"""Tenants on two PostgreSQL clusters: the shared one and one the tests start. One
cluster going down costs its tenants only; the others serve on, and it comes back."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from infra.cli import app as casino
from infra.cli import tenant_apps
from infra.cli.store import tenants_or_exit
from infra.http import tenants as http_tenants
from tests.conftest import POSTGRES_URL, eventually
from tests.faults.cluster import Cluster
from tests.infra.tenants.conftest import (
    Brand,
    cluster_url,
    directory_of,
    drop_schema,
    open_brand,
    serve,
    start,
    stop,
)
from tests.provider_client import SECRET, ProviderClient

pytestmark = pytest.mark.postgres


@pytest.fixture
def spread(
    second_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Brand]]:
    """`alpha` on the shared cluster, `beta` on the second; a request deadline of 3 s."""
    monkeypatch.setenv("CASINO_REQUEST_DEADLINE_SECONDS", "3")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    made = {
        "alpha": open_brand("alpha", POSTGRES_URL, schema, tmp_path),
        "beta": open_brand("beta", cluster_url(second_cluster), schema, tmp_path),
    }
    yield made
    for brand in made.values():
        brand.store.close()
    start(second_cluster)
    drop_schema(POSTGRES_URL, schema)
    drop_schema(cluster_url(second_cluster), schema)


def deposit(client: TestClient, brand: Brand, key: str) -> int:
    body = {"mode": "real", "amount": "10.00"}
    answer = client.post("/v1/players/alice/deposits", json=body, headers=brand.headers(key=key))
    return answer.status_code


def test_one_tenants_cluster_down_costs_only_its_tenant(
    spread: dict[str, Brand], second_cluster: Cluster
) -> None:
    alpha, beta = spread["alpha"], spread["beta"]
    with TestClient(serve(spread)) as client:
        for brand in (alpha, beta):
            player = {"player_id": "alice", "display_name": "Alice"}
            assert client.post("/v1/players", json=player, headers=brand.headers()).is_success
        stop(second_cluster)
        refused = client.post(
            "/v1/players/alice/deposits",
            json={"mode": "real", "amount": "10.00"},
            headers=beta.headers(key="beta-1"),
        )
        assert refused.status_code == 503, refused.text
        assert refused.headers["Retry-After"]
        assert refused.json()["code"] == "store_unavailable"
        assert deposit(client, alpha, "alpha-1") == 201
        alpha_wallet = client.get("/v1/players/alice/wallets/real", headers=alpha.headers())
        assert alpha_wallet.json()["balance"] == "10.00"
        ready = client.get("/v1/health/ready")
        assert ready.status_code == 200, ready.text
        failing = {c["name"] for c in ready.json()["checks"] if not c["ok"]}
        assert "beta/store" in failing and "alpha/store" not in failing
        start(second_cluster)
        # The 503 was "not known to have taken effect": the retry lands once.
        assert deposit(client, beta, "beta-1") == 201
        assert deposit(client, beta, "beta-1") == 201
        beta_wallet = client.get("/v1/players/alice/wallets/real", headers=beta.headers())
        assert beta_wallet.json()["balance"] == "10.00"
        assert client.get("/v1/health/ready").json()["status"] in ("ready", "degraded")


def test_tenants_list_names_the_tenant_whose_cluster_is_down(
    spread: dict[str, Brand], second_cluster: Cluster
) -> None:
    env = {"CASINO_TENANTS": directory_of(spread)}
    stop(second_cluster)
    result = CliRunner().invoke(casino, ["tenants", "list", "--json"], env=env)
    assert result.exit_code == 0, result.output
    listed = {row["tenant"]: row for row in json.loads(result.output)["tenants"]}
    assert listed["alpha"]["reachable"] and listed["alpha"]["lag"] == 0
    assert not listed["beta"]["reachable"]
    assert "cannot reach" in listed["beta"]["problem"]
    start(second_cluster)


def test_a_providers_calls_go_on_while_another_tenants_cluster_is_down(
    spread: dict[str, Brand], second_cluster: Cluster
) -> None:
    alpha, beta = spread["alpha"], spread["beta"]
    body = {"provider_id": "acme", "name": "Acme", "secrets": [SECRET], "bonus_allowed": False}
    with TestClient(serve(spread)) as client:
        registered = client.post("/v1/providers", json=body, headers=alpha.headers("operator"))
        assert registered.status_code == 201, registered.text
        player = {"player_id": "alice", "display_name": "Alice"}
        assert client.post("/v1/players", json=player, headers=alpha.headers()).is_success
        session = {"provider_id": "acme", "game_id": "starburst", "mode": "real"}
        opened = client.post(
            "/v1/players/alice/game-sessions", json=session, headers=alpha.headers()
        )
        token = opened.json()["token"]
    stop(second_cluster)
    # A process started anew knows no provider yet, and asks beta's store first.
    with TestClient(serve({"beta": beta, "alpha": alpha})) as client:
        answer = ProviderClient(client).balance(token)
        assert answer.status_code == 200, answer.text
        # An id no reachable tenant holds is not called unknown while beta cannot say.
        nobody = ProviderClient(client, provider_id="nobody").balance(token)
        assert (nobody.status_code, nobody.json()["code"]) == (503, "store_unavailable")
        assert nobody.headers["Retry-After"] == "1"
    start(second_cluster)


def test_a_tenant_whose_cluster_is_down_at_start_waits_while_the_others_serve(
    spread: dict[str, Brand], second_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One brand's database down when the process starts keeps that brand shut, not
    the process: its requests are 503 until it opens, in the background, by itself."""
    alpha, beta = spread["alpha"], spread["beta"]
    monkeypatch.setenv("CASINO_TENANTS", directory_of(spread))
    monkeypatch.setattr(http_tenants, "TENANT_RETRY_SECONDS", 0.2)
    stop(second_cluster)
    served = tenant_apps(tenants_or_exit())
    assert list(served.apps) == ["alpha"] and list(served.waiting) == ["beta"]
    player = {"player_id": "alice", "display_name": "Alice"}
    with TestClient(served) as client:
        assert client.post("/v1/players", json=player, headers=alpha.headers()).status_code == 201
        refused = client.post("/v1/players", json=player, headers=beta.headers(key="beta-1"))
        assert (refused.status_code, refused.json()["code"]) == (503, "store_unavailable")
        assert refused.headers["Retry-After"] == "1"
        ready = client.get("/v1/health/ready")
        assert (ready.status_code, ready.json()["status"]) == (200, "degraded")
        failing = {c["name"]: c["detail"] for c in ready.json()["checks"] if not c["ok"]}
        assert failing["beta/store"] == "not opened: StoreNotOpened"
        assert "alpha/store" not in failing
        start(second_cluster)

        def registered() -> int:
            sent = client.post("/v1/players", json=player, headers=beta.headers(key="beta-1"))
            return sent.status_code

        assert eventually(registered, lambda status: status == 201, seconds=60) == 201
        assert client.get("/v1/players/alice", headers=beta.headers()).status_code == 200
        assert client.get("/v1/health/ready").json()["status"] in ("ready", "degraded")
        assert "beta" in served.apps and not served.waiting


def test_a_tenant_whose_server_answers_and_refuses_stops_the_start(
    spread: dict[str, Brand], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a database that does not answer waits: one that answers and refuses (here,
    no such database) is a setting to fix, and the start stops, naming it."""
    entries = {name: brand.entry for name, brand in spread.items()}
    entries["beta"] = {**entries["beta"], "database_url": f"{POSTGRES_URL}_no_such_database"}
    monkeypatch.setenv("CASINO_TENANTS", json.dumps({"tenants": entries}))
    with pytest.raises(typer.Exit) as stopped:
        tenant_apps(tenants_or_exit())
    assert stopped.value.exit_code == 2


def test_no_tenant_reachable_stops_the_start(
    spread: dict[str, Brand], monkeypatch: pytest.MonkeyPatch
) -> None:
    nowhere = "postgresql://postgres@127.0.0.1:1/test"  # nothing listens on port 1
    entries = {name: {**brand.entry, "database_url": nowhere} for name, brand in spread.items()}
    monkeypatch.setenv("CASINO_TENANTS", json.dumps({"tenants": entries}))
    with pytest.raises(typer.Exit) as stopped:
        tenant_apps(tenants_or_exit())
    assert stopped.value.exit_code == 2


def test_a_waiting_tenant_opens_where_the_directory_says_now(
    spread: dict[str, Brand],
    second_cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its cluster down at start, an operator points the tenant elsewhere in the
    directory file: the retry opens it there, not at the place it had at start."""
    directory = tmp_path / "tenants.json"
    entries = {name: brand.entry for name, brand in spread.items()}
    directory.write_text(json.dumps({"tenants": entries}))
    monkeypatch.setenv("CASINO_TENANTS", str(directory))
    monkeypatch.setattr(http_tenants, "TENANT_RETRY_SECONDS", 0.5)
    stop(second_cluster)
    served = tenant_apps(tenants_or_exit())
    assert list(served.waiting) == ["beta"]
    moved_schema = f"t_{uuid.uuid4().hex[:16]}"
    entries["beta"] = {**entries["beta"], "database_url": POSTGRES_URL,
                       "postgres_schema": moved_schema}  # fmt: skip
    try:
        with TestClient(served) as client:
            directory.write_text(json.dumps({"tenants": entries}))
            player = {"player_id": "bea", "display_name": "Bea"}

            def registered() -> int:
                headers = spread["beta"].headers(key="beta-moved")
                return client.post("/v1/players", json=player, headers=headers).status_code

            assert eventually(registered, lambda status: status == 201, seconds=60) == 201
            opened = served.apps["beta"].state.settings
            assert (opened.database_url, opened.postgres_schema) == (POSTGRES_URL, moved_schema)
    finally:
        start(second_cluster)
        drop_schema(POSTGRES_URL, moved_schema)
