"""A sealed store written while receipts were events (tests/fixtures/
store_before_receipts_table.*) opens, verifies, answers its old receipts and keeps
new ones in the receipts table, its seals one chain across the change."""

from __future__ import annotations

import datetime
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.outcome import Receipt
from infra.audit.verify import verify
from infra.store import seal as seals
from infra.store.store import Store
from tests.conftest import SEAL_KEY, StoreFactory, every_store_event
from tests.infra.store.test_old_stores import EVENT_COLUMNS, copy_into_postgres

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OLD_STORE = FIXTURES / "store_before_receipts_table.sqlite"
MANIFEST: dict[str, Any] = json.loads((FIXTURES / "store_before_receipts_table.json").read_text())
OLD_SEAL_COLUMNS = (
    "last_position, first_position, event_count, events_digest, previous, digest, signature"
)


@pytest.fixture
def old_store(stores: StoreFactory, tmp_path: Path) -> Iterator[Store]:
    if stores.backend == "sqlite":
        shutil.copy(OLD_STORE, tmp_path / "casino.sqlite")
    else:
        stores.close(stores.open())  # the schema, made by today's code
        _copy_into_postgres(stores.schema)
    store = stores.open()
    # The clock a day after the store was written: its receipts' age, whatever today.
    written = max(event.timestamp for event in every_store_event(store))
    store.app.clock = lambda: written + datetime.timedelta(days=1)
    yield store


def _copy_into_postgres(schema: str) -> None:
    copy_into_postgres(
        OLD_STORE,
        schema,
        [
            ("stored_events", "casino_events", EVENT_COLUMNS, "rowid"),
            (seals.TABLE, seals.TABLE, OLD_SEAL_COLUMNS, "last_position"),
        ],
    )


def replay(store: Store, receipt: dict[str, Any]) -> Any:
    remembered: Receipt[Any] = Receipt(receipt["key"], receipt["fingerprint"], lambda _: {})
    return store.app.deposit.with_receipt(remembered, "ann", "real", 1)


def balances(store: Store) -> dict[str, int]:
    return {name: store.app.wallet(name, "real").balance_cents for name in MANIFEST["wallets"]}


def test_an_old_sealed_store_verifies_and_answers_every_old_receipt(old_store: Store) -> None:
    report = verify(old_store, None, lambda _: None, public_key=SEAL_KEY.public_key())
    assert (report.problems, report.events, report.receipts) == ([], MANIFEST["events"], 5)
    for receipt in MANIFEST["receipts"]:
        outcome = replay(old_store, receipt)
        assert outcome.replayed and outcome.answer == receipt["answer"]
    assert balances(old_store) == MANIFEST["wallets"]


def test_new_receipts_go_to_the_table_and_the_seals_stay_one_chain(old_store: Store) -> None:
    fresh: Receipt[Any] = Receipt("new", "f", lambda movement: {"id": movement.transaction_id})
    first = old_store.app.deposit.with_receipt(fresh, "bob", "real", 100)
    assert not first.replayed
    assert old_store.app.deposit.with_receipt(fresh, "bob", "real", 100).replayed
    assert replay(old_store, MANIFEST["receipts"][0]).replayed
    assert balances(old_store)["bob"] == MANIFEST["wallets"]["bob"] + 100
    report = verify(old_store, None, lambda _: None, public_key=SEAL_KEY.public_key())
    assert (report.problems, report.receipts) == ([], 6)
