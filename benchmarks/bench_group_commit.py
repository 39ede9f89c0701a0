"""The seam from 16 threads on PostgreSQL, with and without group commit.

Each thread deposits with an idempotency receipt, as the HTTP API does. Printed per
setting: commands per second; the database's transactions per command (from
`pg_stat_database.xact_commit`, reads included) and the committer's write
transactions per command; and PostgreSQL's CPU per command (the CPU time of every
`postgres` process on this machine, from /proc). On a 2-core machine Python's CPU is
the ceiling for commands/s; what group commit changes is the database's work per
command, which is what lets the same code scale where there are more cores.

The database and /proc counters are machine-wide: run the benchmark on a quiet machine.
"""

from __future__ import annotations

import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg

from domain.outcome import Receipt
from infra.store.group_commit import GroupCommitSettings
from infra.store.store import Store, open_store

POSTGRES_URL = os.environ.get(
    "CASINO_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
THREADS = 16
DEPOSITS_EACH = int(os.environ.get("BENCH_GROUP_COMMIT_DEPOSITS", "150"))
STATS_FLUSH_SECONDS = 1.2  # PostgreSQL's backends report their counters about once a second


def postgres_cpu_seconds() -> float:
    """CPU time (user + system) of every postgres process now running here."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # The process ended while we looked.
        name = text[text.index("(") + 1 : text.rindex(")")]
        if name.startswith("postgres"):
            fields = text[text.rindex(")") + 2 :].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def committed_transactions() -> int:
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        row = connection.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def deposits_from_threads(store: Store) -> float:
    players = [f"bench-{n}" for n in range(THREADS)]
    for player in players:
        store.app.register_player(player, player)

    def deposits(player: str) -> None:
        for _ in range(DEPOSITS_EACH):
            receipt = Receipt(uuid.uuid4().hex, "bench", lambda moved: {"id": moved.transaction_id})
            store.app.deposit.with_receipt(receipt, player, "real", 100)

    started = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(deposits, players))
    return time.perf_counter() - started


def measured(group_commit: GroupCommitSettings | None) -> dict[str, float]:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    store = open_store(
        POSTGRES_URL, postgres_schema=schema, pool_size=THREADS, group_commit=group_commit
    )
    try:
        time.sleep(STATS_FLUSH_SECONDS)
        transactions, cpu = committed_transactions(), postgres_cpu_seconds()
        committer = store.group_commit
        writes_before = committer.counts.transactions if committer else 0
        seconds = deposits_from_threads(store)
        cpu = postgres_cpu_seconds() - cpu
        time.sleep(STATS_FLUSH_SECONDS)
        transactions = committed_transactions() - transactions
        commands = THREADS * (DEPOSITS_EACH + 1)  # the registrations are commands too
        writes = (committer.counts.transactions - writes_before) if committer else commands
    finally:
        store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")  # type: ignore[arg-type]
    return {
        "commands_per_s": THREADS * DEPOSITS_EACH / seconds,
        "db_transactions_per_command": transactions / commands,
        "write_transactions_per_command": writes / commands,
        "postgres_cpu_ms_per_command": 1000 * cpu / commands,
    }


def run() -> dict[str, float]:
    figures: dict[str, float] = {}
    alone = measured(None)
    shared = measured(GroupCommitSettings())
    for name, value in alone.items():
        figures[f"without_group_commit_{name}"] = value
    for name, value in shared.items():
        figures[f"with_group_commit_{name}"] = value
    for name in ("commands_per_s", "postgres_cpu_ms_per_command"):
        figures[f"ratio_with_to_without_{name}"] = shared[name] / alone[name]
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:55s} {value:12.4f}")
