"""Seal keys rotate without a gap (rules.md 5, "Keys"): a rotation is recorded in the
log, sealed by the key that signs now; the service saves on with the next key;
verify follows the chain from the auditor's pinned key and names a seal signed by
a key outside it; a service configured with a key outside the chain refuses to
start, naming the key's fingerprint. On both stores."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra.audit.verify import verify
from infra.store.key_chain import SealKeyOutsideChain, fingerprint
from infra.store.seal import SealKeyRetired, public_key_text
from infra.store.store import Store, open_store
from tests.conftest import SEAL_KEY, StoreFactory

PINNED = SEAL_KEY.public_key()  # the auditor's: the key the log began with
NEXT = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
OUTSIDE = Ed25519PrivateKey.from_private_bytes(bytes(range(2, 34)))


def opened_with(stores: StoreFactory, key: Ed25519PrivateKey) -> Store:
    store = open_store(stores.url, postgres_schema=stores.schema, pool_size=2, seal_key=key)
    stores.opened.append(store)
    return store


def rotate(store: Store, to: Ed25519PrivateKey) -> None:
    sealer: Any = store.app.recorder.sealer  # type: ignore[attr-defined]
    store.app.rotate_seal_key(public_key_text(sealer.public_key), public_key_text(to.public_key()))


def problems_of(store: Store) -> list[str]:
    return verify(store, None, lambda _: None, public_key=PINNED).problems


def test_the_service_saves_on_with_the_next_key_and_verify_follows_the_chain(
    stores: StoreFactory, store: Store
) -> None:
    # Given a log sealed with the first key, then handed over to the next
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 1_000)
    rotate(store, NEXT)
    stores.close(store)
    # When the service restarts with the next key
    restarted = opened_with(stores, NEXT)
    restarted.app.deposit("ann", "real", 500)
    restarted.app.withdraw("ann", "real", 300)  # its events checked against both keys' seals
    # Then its seals are the next key's, and verify, pinned to the first, holds
    assert restarted.app.wallet("ann", "real").balance_cents == 1_200
    assert problems_of(restarted) == []


def test_a_server_still_on_the_old_key_stops_saving_once_the_next_key_has_sealed(
    stores: StoreFactory, store: Store
) -> None:
    # Given two servers: one records the rotation and saves on with the old key until
    # the other, restarted with the next key, saves
    store.app.register_player("ann", "Ann")
    rotate(store, NEXT)
    store.app.deposit("ann", "real", 100)  # the old key still signs: nothing sealed anew
    opened_with(stores, NEXT).app.deposit("ann", "real", 500)
    # When the one still on the old key is asked to save, it refuses, saying why: a
    # configuration to finish (restart it with the next key), not tampering
    with pytest.raises(SealKeyRetired, match="handed over to"):
        store.app.deposit("ann", "real", 100)
    # And the log verifies, pinned to the first key
    assert problems_of(store) == []


def test_a_key_outside_the_chain_refuses_to_start_naming_its_fingerprint(
    stores: StoreFactory, store: Store
) -> None:
    store.app.register_player("ann", "Ann")
    with pytest.raises(SealKeyOutsideChain, match=fingerprint(OUTSIDE.public_key())):
        opened_with(stores, OUTSIDE)
    rotate(store, NEXT)
    opened_with(stores, NEXT).close()  # handed over to: it starts


def test_verify_names_a_seal_signed_by_a_key_the_chain_never_reached(
    stores: StoreFactory, store: Store
) -> None:
    # Given a log re-sealed, from the start, by a key the insider chose (the key in the
    # service's configuration replaced: rows 3 of the insider review)
    impostor = opened_with_fresh_log(stores, OUTSIDE)
    impostor.app.register_player("bob", "Bob")
    # Then verify, pinned to the auditor's key, names every seal
    problems = problems_of(impostor)
    assert any("is not signed by the service's key (the pinned key" in p for p in problems)


def opened_with_fresh_log(stores: StoreFactory, key: Ed25519PrivateKey) -> Store:
    fresh = StoreFactory(stores.backend, stores.tmp_path / "fresh")
    (stores.tmp_path / "fresh").mkdir(exist_ok=True)
    store = open_store(fresh.url, postgres_schema=fresh.schema, pool_size=2, seal_key=key)
    stores.opened.append(store)
    stores_to_drop.append(fresh)
    return store


stores_to_drop: list[StoreFactory] = []


@pytest.fixture(autouse=True)
def drop_fresh_logs() -> Any:
    yield
    while stores_to_drop:
        stores_to_drop.pop().close_all()
