"""Two tenants served by one process, on SQLite (a file each) and PostgreSQL (a schema
each in one database): their stores, settings and the app that chooses by key."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from domain.settings import GameSettings
from infra.config import Settings, load_settings
from infra.http.app import create_app
from infra.http.tenants import TenantApps
from infra.store.seal import new_private_key, parse_private_key, private_key_text, public_key_text
from infra.store.store import Store, open_store
from tests.conftest import POSTGRES_REQUIRED, StoreFactory
from tests.faults.cluster import Cluster, postgres_binaries


@dataclass
class Brand:
    name: str
    store: Store
    settings: Settings
    entry: dict[str, Any]  # its entry in CASINO_TENANTS

    @property
    def public_key(self) -> str:
        return public_key_text(parse_private_key(self.entry["seal_key"]).public_key())

    def headers(self, role: str = "service", key: str | None = None) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.name}-{role}",
            "Idempotency-Key": key or uuid.uuid4().hex,
        }


def tenant_entry(name: str, url: str, schema: str, witness: Path) -> dict[str, Any]:
    """A directory entry of CASINO_TENANTS, with keys of the tenant's own."""
    return {
        "database_url": url,
        "postgres_schema": schema,
        "api_keys": {role: f"{name}-{role}" for role in ("service", "operator", "auditor")},
        "seal_key": private_key_text(new_private_key()),
        "secret_key": uuid.uuid4().hex + uuid.uuid4().hex,
        "witness": str(witness),
    }


def open_brand(name: str, url: str, schema: str, folder: Path) -> Brand:
    """A tenant's store opened as the server opens it, with keys of its own."""
    entry = tenant_entry(name, url, schema, folder / f"{name}.jsonl")
    store = open_store(
        url,
        postgres_schema=schema,
        pool_size=2,
        games=GameSettings(test_mode=True),
        seal_key=parse_private_key(entry["seal_key"]),
    )
    keys = ",".join(f"{role}={key}" for role, key in entry["api_keys"].items())
    settings = load_settings(database_url=url, postgres_schema=schema, api_keys=keys)
    return Brand(name, store, settings, entry)


def serve(brands: dict[str, Brand], background: bool = False) -> TenantApps:
    return TenantApps(
        {
            name: create_app(brand.store, brand.settings, background=background, tenant=name)
            for name, brand in brands.items()
        }
    )


@pytest.fixture(scope="session")
def second_cluster(postgres_up: bool) -> Iterator[Cluster]:
    """A PostgreSQL cluster of the tests' own beside the shared one, on a free port,
    removed afterwards (tests/faults/cluster.py); wal_level=logical, where the shared
    one has replica."""
    binaries = postgres_binaries()
    if not postgres_up or binaries is None:
        if POSTGRES_REQUIRED:
            pytest.fail("a second PostgreSQL cluster is required, and initdb is not installed")
        pytest.skip("PostgreSQL or its initdb is not here")
    Cluster.remove_orphans(binaries)
    cluster = Cluster(binaries)
    cluster.create()
    with (cluster.data / "postgresql.conf").open("a") as conf:
        conf.write("wal_level = logical\n")  # a move from it replicates (infra/tenant_move.py)
    cluster.restart()
    try:
        cluster.new_database("test")
        yield cluster
    finally:
        cluster.remove()


def cluster_url(cluster: Cluster) -> str:
    return cluster.url("test_1")


def stop(cluster: Cluster) -> None:
    """The cluster down, every connection ended (fast: the suite's clusters run with
    synchronous_commit off, which an immediate stop would make lose commits)."""
    cluster.pg_ctl("stop", "-m", "fast")


def start(cluster: Cluster) -> None:
    if not (cluster.data / "postmaster.pid").exists():
        cluster.pg_ctl("start")
    cluster.wait_until_up()


def drop_schema(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]


@pytest.fixture
def brands(stores: StoreFactory, tmp_path: Path) -> Iterator[dict[str, Brand]]:
    """Tenants `alpha` and `beta`, each with a store of its own on the test's backend."""
    made: dict[str, Brand] = {}
    factories = []
    for name in ("alpha", "beta"):
        factory = StoreFactory(stores.backend, tmp_path / name)
        factories.append(factory)
        made[name] = open_brand(name, factory.url, factory.schema, tmp_path)
        factory.opened.append(made[name].store)
    yield made
    for factory in factories:
        factory.close_all()


@pytest.fixture
def served(brands: dict[str, Brand]) -> Iterator[TestClient]:
    with TestClient(serve(brands)) as client:
        yield client


def directory_of(brands: dict[str, Brand]) -> str:
    """CASINO_TENANTS naming the brands' stores."""
    return json.dumps({"tenants": {name: brand.entry for name, brand in brands.items()}})
