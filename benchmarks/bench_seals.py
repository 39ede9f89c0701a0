"""What sealing costs: deposits and P2P rounds per second with seals on and off.

Each save is sealed once (one SHA-256 pass and one Ed25519 signature per
transaction, and on PostgreSQL a second round trip): infra/store/seal.py. Each
figure is the better of two runs, on and off taking turns, to damp the noise of a
shared machine.
"""

from __future__ import annotations

import os
import tempfile
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
    key = new_private_key() if sealed else None
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


def best_of(backend: str, measure: Callable[[Store], float]) -> tuple[float, float]:
    """(sealed, unsealed) per second, each the best of RUNS fresh stores."""
    sealed, unsealed = 0.0, 0.0
    for _ in range(RUNS):
        for seals_on in (False, True):
            with fresh_store(backend, seals_on) as store:
                figure = measure(store)
            if seals_on:
                sealed = max(sealed, figure)
            else:
                unsealed = max(unsealed, figure)
    return sealed, unsealed


def run() -> dict[str, float]:
    figures: dict[str, float] = {}
    measures: dict[str, Callable[[Store], float]] = {
        "deposits": lambda store: bench_wallets.deposits_per_second(store, with_receipts=False),
        "p2p_rounds": bench_rounds.p2p_rounds_per_second,
    }
    for backend in ("sqlite", "postgres"):
        for name, measure in measures.items():
            sealed, unsealed = best_of(backend, measure)
            figures[f"{backend}_{name}_per_s_sealed"] = sealed
            figures[f"{backend}_{name}_per_s_unsealed"] = unsealed
            figures[f"{backend}_{name}_sealing_cost_percent"] = 100 * (1 - sealed / unsealed)
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:45s} {value:12.2f}")
