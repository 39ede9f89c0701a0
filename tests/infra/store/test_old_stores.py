"""A store written by an earlier version opens, verifies and plays on (tests/fixtures).

The fixture was written before the house was restructured: receipts stored the
whole HTTP answer, blackjack rounds named no ruleset. On SQLite the file itself
is opened; on PostgreSQL its events and snapshots are copied, byte for byte, into
a fresh schema, as a migration between stores would.
"""

from __future__ import annotations

import datetime
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from infra.audit.verify import verify
from infra.store.store import Store
from tests.conftest import (
    AUDITOR,
    OPERATOR,
    POSTGRES_URL,
    SERVICE,
    Api,
    StoreFactory,
    every_store_event,
)
from tests.infra.http.helpers import as_written, serving

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OLD_STORE = FIXTURES / "store_before_issue_18.sqlite"
MANIFEST: dict[str, Any] = json.loads((FIXTURES / "store_before_issue_18.json").read_text())
ROUNDS: dict[str, str] = MANIFEST["rounds"]


@pytest.fixture
def old_store(stores: StoreFactory, tmp_path: Path) -> Iterator[Store]:
    if stores.backend == "sqlite":
        shutil.copy(OLD_STORE, tmp_path / "casino.sqlite")
        yield stores.open()
        return
    stores.close(stores.open())  # the schema, made by today's code
    _copy_into_postgres(stores.schema)
    yield stores.open()


EVENT_COLUMNS = "originator_id, originator_version, topic, state"


def copy_into_postgres(
    old_store: Path, schema: str, tables: list[tuple[str, str, str, str]]
) -> None:
    """Rows of an old SQLite store copied into a PostgreSQL schema: each of `tables`
    is (SQLite table, PostgreSQL table, columns, the column giving their order)."""
    with sqlite3.connect(old_store) as old:
        copied = [
            (new_table, columns, old.execute(f"SELECT {columns} FROM {old_table} ORDER BY {order}"))
            for old_table, new_table, columns, order in tables
        ]
        with psycopg.connect(POSTGRES_URL) as new:
            for table, columns, rows in copied:
                statement = f"COPY {schema}.{table} ({columns}) FROM STDIN"
                with new.cursor().copy(statement) as copy:  # type: ignore[arg-type]
                    for row in rows:
                        copy.write_row(row)


def _copy_into_postgres(schema: str) -> None:
    copy_into_postgres(
        OLD_STORE,
        schema,
        [
            ("stored_events", "casino_events", EVENT_COLUMNS, "rowid"),
            ("stored_snapshots", "casino_snapshots", EVENT_COLUMNS, "originator_id"),
        ],
    )


def test_an_old_store_verifies_with_every_round_settled_by_the_rules_of_its_day(
    old_store: Store,
) -> None:
    report = verify(old_store, None, lambda _: None)
    assert (report.problems, report.events, report.rounds) == ([], MANIFEST["events"], 9)
    insured = old_store.app.round(ROUNDS["blackjack_insured_bust"])
    assert getattr(insured, "ruleset", None) == "baden-baden@1"
    assert insured.player_net_cents == 0  # the busted box's insurance paid, as it was then


def retried_days_after_it_was_written(store: Store, days: int) -> None:
    """The store's clock, `days` after its last event: its receipts' age, whatever today."""
    written = max(event.timestamp for event in every_store_event(store))
    store.app.clock = lambda: written + datetime.timedelta(days=days)


def test_every_old_answer_replays_exactly_and_changes_nothing(old_store: Store) -> None:
    retried_days_after_it_was_written(old_store, 1)
    with serving(old_store) as api:
        for receipt in MANIFEST["receipts"]:
            headers = {
                **(OPERATOR if receipt["role"] == "operator" else SERVICE),
                "Idempotency-Key": receipt["key"],
            }
            answer = api.client.request(
                receipt["method"], receipt["path"], json=receipt["body"], headers=headers
            )
            assert (answer.status_code, answer.json()) == (receipt["status"], receipt["answer"])
            assert answer.headers["Idempotent-Replayed"] == "true"
        assert _wallets(api) == MANIFEST["wallets"]
        for round_id, seen in MANIFEST["rounds_seen"].items():
            assert api.get(f"/v1/rounds/{round_id}").json() == seen


def test_an_old_answer_past_its_retention_is_refused_and_changes_nothing(
    old_store: Store,
) -> None:
    # Its receipts are events of the log, which are never pruned; they expire all the same
    retried_days_after_it_was_written(old_store, 91)
    with serving(old_store) as api:
        for receipt in MANIFEST["receipts"][:5]:
            headers = {
                **(OPERATOR if receipt["role"] == "operator" else SERVICE),
                "Idempotency-Key": receipt["key"],
            }
            answer = api.client.request(
                receipt["method"], receipt["path"], json=receipt["body"], headers=headers
            )
            assert (answer.status_code, answer.json()["code"]) == (422, "idempotency_key_expired")
        assert _wallets(api) == MANIFEST["wallets"]


def test_play_goes_on_in_an_old_store_and_it_still_verifies(old_store: Store) -> None:
    with serving(old_store) as api:
        for round_id in (ROUNDS["house_open"], ROUNDS["p2p_open"]):
            assert api.post(f"/v1/rounds/{round_id}/deal").status_code == 200
        resumed = api.post("/v1/players/alice/reconnect").json()["open_rounds"]
        assert ROUNDS["blackjack_interrupted"] in [round_["round_id"] for round_ in resumed]
        stand = {"box": 1, "hand": 0, "action": "stand"}
        answer = api.post(f"/v1/rounds/{ROUNDS['blackjack_interrupted']}/actions", stand)
        assert (answer.status_code, answer.json()["status"]) == (200, "settled")
        assert api.post(f"/v1/rounds/{ROUNDS['blackjack_open']}/deal").status_code == 200
        api.deposit("carol", "1.00")
        assert api.trial_balance()["total"] == "0.00"
        assert api.wallet("bob")["dealer_points"] < MANIFEST["wallets"]["bob/real"]["dealer_points"]
    assert verify(old_store, None, lambda _: None).problems == []


def test_an_old_rounds_trail_is_read_from_its_events_as_they_upcast(old_store: Store) -> None:
    """The read models rebuilt at opening hold where each event of a round is, no copy
    (the old trail's copy is dropped): the trail reads the events from the log, through
    their upcasts, as the round itself is read."""
    round_id = ROUNDS["blackjack_insured_bust"]
    with serving(old_store) as api:
        trail = api.get(f"/v1/rounds/{round_id}/audit", headers=AUDITOR).json()["events"]
    own = [event for event in every_store_event(old_store) if str(event.originator_id) == round_id]
    shown = [(e["version"], e["topic"]) for e in trail if e["aggregate_id"] == round_id]
    assert shown == [(event.originator_version, event.TOPIC) for event in own]
    assert trail[0]["type"] == "Opened" and trail[0]["data"]["ruleset"] == "baden-baden@1"
    assert [e["position"] for e in trail] == sorted(e["position"] for e in trail)
    assert any(e["topic"].startswith("casino:Wallet.") for e in trail)  # its holds, its payout
    with old_store.database.read() as cursor:
        cursor.execute("SELECT COUNT(*) FROM round_trail")
        assert (cursor.fetchone() or [0])[0] > 0
        with pytest.raises(Exception, match="round_events"):
            cursor.execute("SELECT COUNT(*) FROM round_events")


def _wallets(api: Api) -> dict[str, Any]:
    names = {key.split("/")[0] for key in MANIFEST["wallets"]}
    return {
        f"{name}/{mode}": as_written(api.wallet(name, mode))
        for name in sorted(names)
        for mode in ("real", "play")
    }
