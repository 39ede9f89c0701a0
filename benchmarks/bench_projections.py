"""Read models: rebuild speed over a log of 200,000+ events on both stores, and how far
the projector falls behind while P2P rounds are played.

The log is made once, on SQLite, by the mixed workload (every game, deposits and
withdrawals); the same stored events are then copied into PostgreSQL, so both
stores rebuild exactly the same log. Lag: `casino projections run` in its own
process follows the log while this process plays P2P rounds as fast as it can
and samples how many events the read models are behind.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psycopg

from benchmarks import workload
from benchmarks.bench_rounds import POSTGRES_URL, drop_schemas, seat_p2p
from infra.audit.rebuild import compare_with_rebuild
from infra.logs import configure_logging
from infra.store.schema import POSTGRES_EVENTS_TABLE, SQLITE_EVENTS_TABLE
from infra.store.store import Store, open_store

EVENTS = int(os.environ.get("BENCH_REBUILD_EVENTS", "200000"))
LAG_SECONDS = float(os.environ.get("BENCH_LAG_SECONDS", "15"))
SAMPLE_SECONDS = 0.05


def fill(store: Store) -> None:
    cast = workload.set_up(store, players=20, tables=4)
    seed = 0
    while store.projector.head() < EVENTS:
        seed += 1
        workload.play(store, cast, rounds=500, seed=seed)


def copy_events(sqlite_path: str, store: Store) -> None:
    """The SQLite log's stored events, in order, into an empty PostgreSQL store."""
    source = sqlite3.connect(sqlite_path)
    rows = source.execute(
        "SELECT originator_id, originator_version, topic, state"
        f" FROM {SQLITE_EVENTS_TABLE} ORDER BY rowid"
    )
    table = f"{store.postgres_schema}.{POSTGRES_EVENTS_TABLE}"
    with psycopg.connect(POSTGRES_URL) as connection, connection.cursor() as cursor:
        copy_sql = f"COPY {table} (originator_id, originator_version, topic, state) FROM STDIN"
        with cursor.copy(copy_sql) as copy:  # type: ignore[arg-type]
            for originator_id, version, topic, state in rows:
                copy.write_row((uuid.UUID(originator_id), version, topic, state))
    source.close()


def rebuild_figures(name: str, store: Store) -> dict[str, float]:
    events = store.projector.head()
    started = time.perf_counter()
    store.projector.rebuild()
    rebuilt = time.perf_counter() - started
    started = time.perf_counter()
    assert compare_with_rebuild(store, lambda _: None).differences == []
    compared = time.perf_counter() - started
    return {
        f"{name}_events_in_log": events,
        f"{name}_rebuild_events_per_s": events / rebuilt,
        f"{name}_rebuild_aside_and_compare_events_per_s": events / compared,
    }


def lag_figures(name: str, store: Store) -> dict[str, float]:
    """P2P rounds for LAG_SECONDS with a separate projector process following them."""
    table_id = seat_p2p(store)
    store.projector.catch_up()
    env = {
        **os.environ,
        "CASINO_DATABASE_URL": store.url,
        "CASINO_POSTGRES_SCHEMA": store.postgres_schema,
        "CASINO_LOG_LEVEL": "warning",
    }
    follower = subprocess.Popen([sys.executable, "-m", "infra.cli", "projections", "run"], env=env)
    samples: list[int] = []
    playing = threading.Event()
    playing.set()

    def sample() -> None:
        while playing.is_set():
            samples.append(store.projector.head() - store.projector.position())
            time.sleep(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample)
    try:
        rounds, started = 0, time.perf_counter()
        sampler.start()
        while time.perf_counter() - started < LAG_SECONDS:
            round_ = store.app.confirm(table_id).result
            assert round_ is not None
            store.app.place_bet(round_.round_id, "player", 1000)
            store.app.deal(round_.round_id)
            rounds += 1
        elapsed = time.perf_counter() - started
    finally:
        playing.clear()
        sampler.join()
        follower.send_signal(signal.SIGTERM)
        follower.wait(timeout=30)
    ordered = sorted(samples)
    return {
        f"{name}_p2p_rounds_per_s_while_followed": rounds / elapsed,
        f"{name}_lag_events_median": statistics.median(ordered),
        f"{name}_lag_events_p95": ordered[int(len(ordered) * 0.95)],
        f"{name}_lag_events_max": ordered[-1],
    }


def run() -> dict[str, float]:
    configure_logging("warning")
    figures: dict[str, float] = {}
    schemas: list[str] = []
    with tempfile.TemporaryDirectory() as directory:
        sqlite_path = str(Path(directory) / "bench.sqlite")
        try:
            store = open_store(f"sqlite:///{sqlite_path}")
            fill(store)
            figures.update(rebuild_figures("sqlite", store))
            store.close()
            schemas.append(f"bench_{uuid.uuid4().hex[:8]}")
            store = open_store(POSTGRES_URL, postgres_schema=schemas[-1])
            copy_events(sqlite_path, store)
            figures.update(rebuild_figures("postgres", store))
            store.close()
            store = open_store(f"sqlite:///{Path(directory) / 'lag.sqlite'}")
            figures.update(lag_figures("sqlite", store))
            store.close()
            schemas.append(f"bench_{uuid.uuid4().hex[:8]}")
            store = open_store(POSTGRES_URL, postgres_schema=schemas[-1])
            figures.update(lag_figures("postgres", store))
            store.close()
        finally:
            drop_schemas(schemas)
    return figures


if __name__ == "__main__":
    for figure, value in run().items():
        print(f"{figure:50s} {value:12.1f}")
