"""Deposits per second through the application, against raw PostgreSQL commits.

Prints, for SQLite and PostgreSQL: deposits per second through the application
layer (one client, plain and with an idempotency receipt as the HTTP API sends),
then raw psycopg single-row INSERT commits per second into a table shaped like
the event table on the same PostgreSQL, and the ratio of the two.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from domain.outcome import Receipt
from infra.store.store import Store, open_store

POSTGRES_URL = os.environ.get(
    "CASINO_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
DEPOSITS = int(os.environ.get("BENCH_DEPOSITS", "3000"))
PLAYERS = 100


def deposits_per_second(store: Store, with_receipts: bool) -> float:
    players = [f"bench-{uuid.uuid4().hex[:8]}" for _ in range(PLAYERS)]
    for player in players:
        store.app.register_player(player, player)
    started = time.perf_counter()
    for index in range(DEPOSITS):
        player = players[index % PLAYERS]
        if with_receipts:
            receipt = Receipt(uuid.uuid4().hex, "bench", lambda moved: {"id": moved.transaction_id})
            store.app.deposit.with_receipt(receipt, player, "real", 100)
        else:
            store.app.deposit(player, "real", 100)
    return DEPOSITS / (time.perf_counter() - started)


def raw_insert_commits_per_second(schema: str) -> float:
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(
            f"CREATE TABLE {schema}.raw_events (originator_id uuid NOT NULL,"  # type: ignore[arg-type]
            " originator_version bigint NOT NULL, topic text, state bytea,"
            " notification_id bigserial, PRIMARY KEY (originator_id, originator_version))"
        )
        state = b'{"amount_cents":100,"postings":[["player:x",100],["cashier",-100]]}' * 2
        started = time.perf_counter()
        for _ in range(DEPOSITS):
            connection.execute(
                f"INSERT INTO {schema}.raw_events (originator_id, originator_version, topic, state)"  # type: ignore[arg-type]
                " VALUES (%s, 1, 'casino:Wallet.Deposited', %s)",
                (uuid.uuid4(), state),
            )
        return DEPOSITS / (time.perf_counter() - started)


def run() -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as directory:
        store = open_store(f"sqlite:///{Path(directory) / 'bench.sqlite'}")
        figures["sqlite_deposits_per_s"] = deposits_per_second(store, with_receipts=False)
        figures["sqlite_deposits_with_receipt_per_s"] = deposits_per_second(store, True)
        store.close()
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    store = open_store(POSTGRES_URL, postgres_schema=schema)
    try:
        figures["postgres_deposits_per_s"] = deposits_per_second(store, with_receipts=False)
        figures["postgres_deposits_with_receipt_per_s"] = deposits_per_second(store, True)
        figures["postgres_raw_insert_commits_per_s"] = raw_insert_commits_per_second(schema)
    finally:
        store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")  # type: ignore[arg-type]
    figures["postgres_app_to_raw_ratio"] = (
        figures["postgres_deposits_per_s"] / figures["postgres_raw_insert_commits_per_s"]
    )
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:45s} {value:12.2f}")
