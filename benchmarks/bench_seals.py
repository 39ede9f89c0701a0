"""What sealing costs: deposits and P2P rounds per second with seals on and off.

Each save is sealed once (one SHA-256 pass and one Ed25519 signature per
transaction, and on PostgreSQL a second round trip): infra/store/seal.py. Each
figure is the best of BENCH_SEAL_RUNS runs (default 2), on and off taking turns;
the wall-clock rates swing with the machine's load, so this process's CPU time per
command (SQLite's work included, PostgreSQL's server not) is printed beside them.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from benchmarks import bench_rounds, bench_wallets
from infra.store.seal import new_private_key
from infra.store.store import Store, open_store

POSTGRES_URL = bench_wallets.POSTGRES_URL
RUNS = int(os.environ.get("BENCH_SEAL_RUNS", "2"))


@contextmanager
def fresh_store(backend: str, sealed: bool) -> Iterator[Store]:
    """A new store; unsealed, its saves are not sealed but its snapshots still signed
    and used (without a key none would be: that would measure something else)."""
    with _opened(backend) as store:
        if not sealed:
            store.app.recorder.sealer = None  # type: ignore[attr-defined]
        yield store


@contextmanager
def _opened(backend: str) -> Iterator[Store]:
    key = new_private_key()
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            store = open_store(f"sqlite:///{Path(directory) / 'bench.sqlite'}", seal_key=key)
            try:
                yield store
            finally:
                store.close()
        return
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    store = open_store(POSTGRES_URL, postgres_schema=schema, seal_key=key)
    try:
        yield store
    finally:
        store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")  # type: ignore[arg-type]


def best_of(
    backend: str, measure: Callable[[Store], float], count: int
) -> dict[bool, tuple[float, float]]:
    """Sealed and not: (per second, CPU microseconds per command), best of RUNS."""
    best = {True: (0.0, float("inf")), False: (0.0, float("inf"))}
    for _ in range(RUNS):
        for seals_on in (False, True):
            with fresh_store(backend, seals_on) as store:
                cpu = time.process_time()
                rate = measure(store)
                cpu_us = (time.process_time() - cpu) / count * 1e6  # set-up included
            best[seals_on] = (max(best[seals_on][0], rate), min(best[seals_on][1], cpu_us))
    return best


def run() -> dict[str, float]:
    figures: dict[str, float] = {}
    measures: dict[str, tuple[Callable[[Store], float], int]] = {
        "deposit": (
            lambda store: bench_wallets.deposits_per_second(store, with_receipts=False),
            bench_wallets.DEPOSITS,
        ),
        "p2p_round": (bench_rounds.p2p_rounds_per_second, bench_rounds.ROUNDS),
    }
    for backend in ("sqlite", "postgres"):
        for name, (measure, count) in measures.items():
            best = best_of(backend, measure, count)
            (sealed, sealed_cpu), (unsealed, unsealed_cpu) = best[True], best[False]
            figures[f"{backend}_{name}s_per_s_sealed"] = sealed
            figures[f"{backend}_{name}s_per_s_unsealed"] = unsealed
            figures[f"{backend}_{name}s_sealing_cost_percent"] = 100 * (1 - sealed / unsealed)
            figures[f"{backend}_cpu_us_per_{name}_sealed"] = sealed_cpu
            figures[f"{backend}_cpu_us_per_{name}_unsealed"] = unsealed_cpu
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:45s} {value:12.2f}")
