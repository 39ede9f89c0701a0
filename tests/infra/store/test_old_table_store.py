"""Tables played before the table rules of RULES.md 2.3-2.4 were made precise
(tests/fixtures/store_before_table_rules.*) load as they were, verify, answer as then,
and play on under today's rules.

That code refused a chemin de fer bet past what the bank still left uncovered, kept
en banque's banker at a side seat and took a bet on the other side's hand. Their
events replay to the same state: the old answers come back unchanged (fields added
since aside), and the coups left open are dealt by today's code.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import infra.store.store as store_module
from infra.audit.verify import verify
from infra.store import seal as seals
from infra.store.receipts import TABLE as RECEIPTS
from infra.store.store import Store
from tests.conftest import SEAL_KEY, StoreFactory
from tests.infra.http.helpers import as_written, serving
from tests.infra.store.test_old_stores import EVENT_COLUMNS, copy_into_postgres

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OLD_STORE = FIXTURES / "store_before_table_rules.sqlite"
MANIFEST: dict[str, Any] = json.loads((FIXTURES / "store_before_table_rules.json").read_text())
ROUNDS: dict[str, str] = MANIFEST["rounds"]
TABLES: dict[str, str] = MANIFEST["tables"]
RECEIPT_COLUMNS = (
    "key_id, scoped_key, fingerprint, answer, answer_sha256, recorded_ms, position, pruned_ms"
)


def open_sealed_copy(
    old_store: Path, stores: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Store:
    """A copy of a sealed old store (or of its events, seals and receipts in
    PostgreSQL), opened by today's code."""
    # The open rounds' seeds were sealed with the tests' all-zero CASINO_SECRET_KEY.
    monkeypatch.setattr(store_module, "PROCESS_SECRET_KEY", bytes(32))
    if stores.backend == "sqlite":
        shutil.copy(old_store, tmp_path / "casino.sqlite")
    else:
        stores.close(stores.open())  # the schema, made by today's code
        copy_into_postgres(
            old_store,
            stores.schema,
            [
                ("stored_events", "casino_events", EVENT_COLUMNS, "rowid"),
                (seals.TABLE, seals.TABLE, seals.COLUMNS, "last_position"),
                (RECEIPTS, RECEIPTS, RECEIPT_COLUMNS, "position"),
            ],
        )
    return stores.open()


@pytest.fixture
def old_store(
    stores: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    yield open_sealed_copy(OLD_STORE, stores, tmp_path, monkeypatch)


def as_then(answer: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """Today's answer with only the fields the old one had."""
    return {key: answer[key] for key in then}


def test_old_tables_and_coups_verify_and_answer_as_they_did(old_store: Store) -> None:
    report = verify(old_store, None, lambda _: None, public_key=SEAL_KEY.public_key())
    assert (report.problems, report.events) == ([], MANIFEST["events"])
    with serving(old_store) as api:
        for table_id, then in MANIFEST["tables_seen"].items():
            now = api.get(f"/v1/tables/{table_id}").json()
            assert as_then(now, then) == {**then, "current_round": now["current_round"]}
        for round_id, then in MANIFEST["rounds_seen"].items():
            now = api.get(f"/v1/rounds/{round_id}").json()
            assert as_then(now, then) == then
            assert now["returned"] == []  # nothing was ever returned uncovered then
        for player_id, then in MANIFEST["wallets"].items():
            answer = api.get(f"/v1/players/{player_id}/wallets/real").json()
            assert as_written(answer) == then
    # Dan's bet on the other side's hand, taken then, stays settled as it was.
    settled = MANIFEST["rounds_seen"][ROUNDS["banque_settled"]]
    assert {"player_id": "dan", "spot": "right", "amount": "10.00"} in settled["bets"]


def test_play_goes_on_at_old_tables_under_todays_rules(old_store: Store) -> None:
    banque = TABLES["en_banque"]
    with serving(old_store) as api:
        for name in ("chemin_open", "banque_open"):
            dealt = api.post(f"/v1/rounds/{ROUNDS[name]}/deal")
            assert (dealt.status_code, dealt.json()["status"]) == (200, "settled")
            assert dealt.json()["returned"] == []  # bets taken within the bank then
        # The old banker kept seat R1; giving up the bank, she stays there.
        withdrawn = api.post(f"/v1/tables/{banque}/bank/withdraw", {"player_id": "ann"})
        assert withdrawn.status_code == 200, withdrawn.text
        assert {"seat": "R1", "player_id": "ann", "leaving": False} in withdrawn.json()["seats"]
        put_up = api.post(f"/v1/tables/{banque}/bank", {"player_id": "cat", "amount": "300.00"})
        assert put_up.json()["banker"] == {"player_id": "cat", "seat": "B", "bank": "300.00"}
        round_id = api.post(f"/v1/tables/{banque}/coups").json()["round_id"]
        body = {"player_id": "dan", "spot": "right", "amount": "10.00"}  # dan sits at L2
        wrong = api.post(f"/v1/rounds/{round_id}/bets", body)
        assert (wrong.status_code, wrong.json()["code"]) == (409, "wrong_side")
        assert api.trial_balance()["total"] == "0.00"
    assert verify(old_store, None, lambda _: None, public_key=SEAL_KEY.public_key()).problems == []
