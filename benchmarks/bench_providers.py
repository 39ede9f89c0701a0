"""A provider's call beside one of our own deposits (rules.md 10): the issue's bar is
that a bet or win from a game provider costs no more than a deposit.

Over HTTP, as bench_cash_outs does: `casino serve` on PostgreSQL (bench_load's
server, load generator and pgbench), one provider, each client on a player and game
session of its own, at 16 clients:

- deposits: `POST /v1/players/{id}/deposits`, the baseline;
- provider calls: `POST /v1/wallet/{provider}/bet` then `/win` in a fresh round each
  time (a slot's spin: the bet opens the round, takes the stake, records the bet under
  its transaction id and the receipt; the win credits), each call timed and counted,
  signed with HMAC-SHA256 over its body.

Each prints calls/s, p50, p99, the server's CPU per call and the ratio to pgbench's
one-trip save at the same concurrency in the same pass. BENCH_PROVIDERS=0 skips the
section; BENCH_PROVIDERS_CLIENTS (default 16), BENCH_PROVIDERS_SECONDS (default 3)
and BENCH_PROVIDERS_REPEATS (default 3) as bench_cash_outs's. The schema is removed
afterwards.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from pathlib import Path

from benchmarks import bench_load
from benchmarks.bench_cash_outs import settle
from benchmarks.bench_load import Cast, Connection, Tally
from benchmarks.bench_rounds import drop_schemas
from infra.logs import configure_logging
from infra.store.store import Store

ENABLED = os.environ.get("BENCH_PROVIDERS", "1") != "0"
SECONDS = min(30.0, max(0.5, float(os.environ.get("BENCH_PROVIDERS_SECONDS", "3"))))
CLIENTS = tuple(
    min(100, max(1, int(n))) for n in os.environ.get("BENCH_PROVIDERS_CLIENTS", "16").split(",")
)
REPEATS = min(9, max(1, int(os.environ.get("BENCH_PROVIDERS_REPEATS", "3"))))
PROVIDER = "bench"
SECRET = "bench-secret-of-at-least-thirty-two-characters"


def set_up(store: Store, clients: int) -> Cast:
    """Players funded for the run, each with a game session; its token kept as the
    client's table (the Cast's slot for a per-client id)."""
    app = store.app
    app.register_provider(PROVIDER, "Bench games", [SECRET], False, "0.96")
    cast = Cast([])
    for n in range(clients):
        player = f"spinner{n}"
        app.register_player(player, player)
        app.deposit(player, "real", bench_load.FUNDS_CENTS)
        opened = app.open_game_session(player, PROVIDER, "slot", "real").result
        assert opened is not None
        cast.players.append(player)
        cast.tables.append(opened.token)
    return cast


async def spin(cast: Cast, n: int, connection: Connection, tally: Tally) -> None:
    """A bet in a round of its own, then its win: two calls, each timed."""
    token, spin_id = cast.tables[n], uuid.uuid4().hex
    bet = {"token": token, "transaction_id": f"b{spin_id}", "round_id": spin_id,
           "game_id": "slot", "amount": "1.00"}  # fmt: skip
    win = {"token": token, "transaction_id": f"w{spin_id}", "round_id": spin_id,
           "amount": "0.95"}  # fmt: skip
    await tally.timed(connection.ok("POST", f"/v1/wallet/{PROVIDER}/bet", bet, SECRET))
    await tally.timed(connection.ok("POST", f"/v1/wallet/{PROVIDER}/win", win, SECRET))
    tally.rounds += 1


def one_pass(port: int, pid: int, cast: Cast, pgbench: str | None, schema: str) -> dict[str, float]:
    figures: dict[str, float] = {}
    for clients in CLIENTS:
        saves = (
            bench_load.pgbench_saves_per_second(pgbench, schema, clients, SECONDS)
            if pgbench
            else 0.0
        )
        figures[f"c{clients}_pgbench_saves_per_s"] = saves
        for name, step in (("deposits", bench_load.deposit), ("provider_calls", spin)):
            tally, cpu = bench_load.point((port, pid), cast, clients, step, SECONDS)
            figures.update(bench_load.point_figures(f"c{clients}_{name}", tally, cpu, saves))
            asyncio.run(settle(port))
    return figures


def run() -> dict[str, float]:
    if not ENABLED:
        return {}
    configure_logging("warning")
    schema = f"bench_providers_{uuid.uuid4().hex[:8]}"
    pgbench = bench_load.pgbench_path()
    try:
        store, keys = bench_load.keyed_store(schema)
        try:
            cast = set_up(store, max(CLIENTS))
        finally:
            store.close()
        with (
            tempfile.TemporaryDirectory(prefix="bench-providers-") as directory,
            bench_load.serving(schema, keys, str(Path(directory) / "witness.jsonl"), 0) as where,
        ):
            port, pid = where
            passes = [one_pass(port, pid, cast, pgbench, schema) for _ in range(REPEATS)]
            figures = bench_load.medians(passes)
        for clients in CLIENTS:
            calls = figures[f"c{clients}_provider_calls_commands_per_s"]
            deposits = figures[f"c{clients}_deposits_commands_per_s"]
            figures[f"c{clients}_provider_calls_per_deposit_throughput"] = calls / deposits
    finally:
        drop_schemas([schema])
    return figures


if __name__ == "__main__":
    for figure, value in run().items():
        print(f"  {figure:60s} {value:14.4f}")
