"""Two tenants served by one process, on SQLite (a file each) and PostgreSQL (a schema
each in one database): their stores, settings and the app that chooses by key."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from domain.settings import GameSettings
from infra.config import Settings, load_settings
from infra.http.app import create_app
from infra.http.tenants import TenantApps
from infra.store.seal import new_private_key, parse_private_key, private_key_text, public_key_text
from infra.store.store import Store, open_store
from tests.conftest import StoreFactory


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


@pytest.fixture
def brands(stores: StoreFactory, tmp_path: Path) -> Iterator[dict[str, Brand]]:
    """Tenants `alpha` and `beta`, each with a store of its own on the test's backend."""
    made: dict[str, Brand] = {}
    factories = []
    for name in ("alpha", "beta"):
        factory = StoreFactory(stores.backend, tmp_path / name)
        factories.append(factory)
        entry = tenant_entry(name, factory.url, factory.schema, tmp_path / f"{name}.jsonl")
        store = open_store(
            factory.url,
            postgres_schema=factory.schema,
            pool_size=2,
            games=GameSettings(test_mode=True),
            seal_key=parse_private_key(entry["seal_key"]),
        )
        factory.opened.append(store)
        keys = ",".join(f"{role}={key}" for role, key in entry["api_keys"].items())
        settings = load_settings(
            database_url=store.url, postgres_schema=factory.schema, api_keys=keys
        )
        made[name] = Brand(name, store, settings, entry)
    yield made
    for factory in factories:
        factory.close_all()


@pytest.fixture
def served(brands: dict[str, Brand]) -> Iterator[TestClient]:
    apps = {
        name: create_app(brand.store, brand.settings, background=False, tenant=name)
        for name, brand in brands.items()
    }
    with TestClient(TenantApps(apps)) as client:
        yield client


def directory_of(brands: dict[str, Brand]) -> str:
    """CASINO_TENANTS naming the brands' stores."""
    return json.dumps({"tenants": {name: brand.entry for name, brand in brands.items()}})
