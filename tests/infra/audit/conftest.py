"""The attacker of the tampering tests (tests/infra/audit/test_verify.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.store.store import Store
from tests.conftest import StoreFactory
from tests.infra.audit.test_verify import Attacker


@pytest.fixture
def attacker(stores: StoreFactory, store: Store) -> Iterator[Attacker]:
    evil = Attacker(stores)
    yield evil
    evil.close()
