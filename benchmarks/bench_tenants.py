"""Tenants (docs/scaling.md): deposits over HTTP at 16 clients for one tenant, and for
four tenants on two PostgreSQL clusters served by one process, beside pgbench on
each cluster in the same run.

The second cluster is one the benchmark starts on a free port (`initdb`, as the
fault suite's: tests/faults/cluster.py) and removes. Each scenario runs `casino
serve` with a tenant directory of its own (CASINO_TENANTS, a file); the 16 clients
are spread over the tenants, each client on a player of its own. Printed: deposits/s
in all and per tenant, p50/p99, the server's CPU per deposit (its projectors
beside it included), and pgbench's one-trip saves/s at 16 connections on each
cluster. BENCH_TENANTS=0 skips it; BENCH_TENANTS_SECONDS (default 3, 0.5-30) and
BENCH_TENANTS_REPEATS (default 3, at most 9; each figure the median) change it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from benchmarks.bench_load import (
    Cast,
    Connection,
    Tally,
    deposit,
    figures_of,
    medians,
    pgbench_path,
    pgbench_saves_per_second,
    serve_process,
    tree_cpu_seconds,
)
from benchmarks.bench_rounds import POSTGRES_URL
from infra.logs import configure_logging
from infra.secrets import new_key
from infra.store.seal import new_private_key, private_key_text

ENABLED = os.environ.get("BENCH_TENANTS", "1") != "0"
SECONDS = min(30.0, max(0.5, float(os.environ.get("BENCH_TENANTS_SECONDS", "3"))))
REPEATS = min(9, max(1, int(os.environ.get("BENCH_TENANTS_REPEATS", "3"))))
CLIENTS = 16


def directory_entries(places: dict[str, str], folder: Path, schema: str) -> dict[str, object]:
    """A tenant directory: each tenant at its database, in a schema of the run's own."""
    return {
        "tenants": {
            name: {
                "database_url": url,
                "postgres_schema": f"{schema}_{name}",
                "api_keys": {"service": f"{name}-service-key"},
                "seal_key": private_key_text(new_private_key()),
                "secret_key": new_key(),
                "witness": str(folder / f"{name}-witness.jsonl"),
            }
            for name, url in places.items()
        }
    }


async def load(port: int, tenants: list[str], seconds: float) -> dict[str, Tally]:
    """CLIENTS clients, client n on tenant n % len(tenants), each depositing to its own
    player for `seconds`: each tenant's tally."""
    tallies = {name: Tally() for name in tenants}
    connections = []
    for n in range(CLIENTS):
        tenant = tenants[n % len(tenants)]
        headers = f"Authorization: Bearer {tenant}-service-key\r\n"
        connection = await Connection.open(port, headers)
        await connection.call("POST", "/v1/players", {"player_id": f"p{n}", "display_name": "p"})
        connections.append((tenant, connection))
    cast = Cast([f"p{n}" for n in range(CLIENTS)])
    deadline = time.perf_counter() + seconds

    async def client(n: int) -> None:
        tenant, connection = connections[n]
        while time.perf_counter() < deadline:
            await deposit(cast, n, connection, tallies[tenant])

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(CLIENTS)))
    for tally in tallies.values():
        tally.seconds = time.perf_counter() - started
    for _, connection in connections:
        connection.close()
    return tallies


def scenario(name: str, places: dict[str, str], schema: str) -> dict[str, float]:
    """`casino serve` for the tenants at `places`, loaded REPEATS times."""
    figures: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-tenants-") as folder:
        directory = Path(folder) / "tenants.json"
        directory.write_text(json.dumps(directory_entries(places, Path(folder), schema)))
        with serve_process({"CASINO_TENANTS": str(directory)}) as (port, pid):
            for _ in range(REPEATS):
                cpu = tree_cpu_seconds(pid)
                tallies = asyncio.run(load(port, list(places), SECONDS))
                cpu = tree_cpu_seconds(pid) - cpu
                figures.append(_figures(name, tallies, cpu))
    return medians(figures)


def _figures(name: str, tallies: dict[str, Tally], cpu: float) -> dict[str, float]:
    everything = Tally(seconds=next(iter(tallies.values())).seconds)
    one: dict[str, float] = {}
    for tenant, tally in tallies.items():
        everything.latencies += tally.latencies
        one[f"{name}_{tenant}_deposits_per_s"] = figures_of(tally)[0]
    deposits, _, p50, p99 = figures_of(everything)
    return {
        f"{name}_deposits_per_s": deposits,
        **one,
        f"{name}_p50_ms": p50,
        f"{name}_p99_ms": p99,
        f"{name}_server_cpu_ms_per_deposit": cpu * 1000 / max(1, len(everything.latencies)),
    }


def drop(url: str, prefix: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (prefix + "%",)
        ).fetchall()
        for (schema,) in found:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]


def run() -> dict[str, float]:
    if not ENABLED:
        return {}
    from tests.faults.cluster import Cluster, postgres_binaries

    binaries = postgres_binaries()
    if binaries is None:
        print("bench_tenants: no initdb here, so no second cluster: skipped", file=sys.stderr)
        return {}
    configure_logging("warning")
    schema = f"bench_tenants_{uuid.uuid4().hex[:8]}"
    cluster = Cluster(binaries)
    cluster.create()
    figures: dict[str, float] = {}
    try:
        second = cluster.url(cluster.new_database("bench"))
        pgbench = pgbench_path()
        if pgbench:
            for label, url in (("shared", POSTGRES_URL), ("second", second)):
                saves = pgbench_saves_per_second(pgbench, schema, CLIENTS, SECONDS, url)
                figures[f"pgbench_{label}_cluster_c{CLIENTS}_saves_per_s"] = saves
        figures.update(scenario("one_tenant", {"t0": POSTGRES_URL}, f"{schema}_one"))
        four = {"t0": POSTGRES_URL, "t1": POSTGRES_URL, "t2": second, "t3": second}
        figures.update(scenario("four_tenants_two_clusters", four, f"{schema}_four"))
    finally:
        drop(POSTGRES_URL, schema)
        cluster.remove()
    return figures


if __name__ == "__main__":
    for figure, value in run().items():
        print(f"  {figure:56s} {value:14.4f}")
