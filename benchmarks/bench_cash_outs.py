"""Cash-outs: what witnessing a withdrawal and checking its wallet first cost.

A withdrawal (`POST /v1/players/{id}/withdrawals`) does two things a deposit does
not. Before it is saved, the wallet's events since the last ones checked are
checked against their seals (infra/store/money_out.py: `MoneyOutCheck`, the
application's `before_money_leaves`). And it is answered only once the witness has
acknowledged a checkpoint covering its save (infra/http/cash_out.py,
infra/witness.py: `WitnessWorker.cover`); withdrawals waiting at once share one.

Over HTTP: `casino serve` on PostgreSQL (bench_load's server, load generator and
pgbench), each client on a player of its own, funded first so that withdrawals of
$0.01 never run out, at 16 clients:

- deposits: the baseline, no check and no witness wait;
- withdrawals with the file witness (the development default: the check, and the
  wait on a line appended and fsync'd);
- withdrawals with a JetStream witness: a NATS server of the benchmark's own
  (Debian's nats-server on a free port, its own store directory, the users and
  stream of tests/infra/checkpoints/nats_server.py, the stream made by the
  operator's user), named to the service in CASINO_WITNESS. Skipped, and said so,
  where nats-server is not installed.

Each prints commands/s, p50, p99, the server's CPU per command and the ratio to
pgbench's one-trip save at the same concurrency in the same pass; each withdrawal
point, the checkpoints noted per withdrawal (the witness's messages or lines
before and after; the worker's own periodic notes are among them). Each server has
a schema of its own and waits for its read models to catch up after each point.

In process (no HTTP, no witness), the check alone: withdrawals/s, p50, p99 and
this process's CPU per withdrawal (PostgreSQL's not included) from 16 threads,
each on a wallet of its own, with the check off and on (each on wallets of its
own, so the check never meets events saved without it); the events it checks per
withdrawal (the wallet's, and the seals they are in, whose spans are read and
hashed whole). Off is the application's `before_money_leaves` set to None on a
store of this benchmark's own: not a configuration, no server runs without the
check; it isolates the check's cost from the witness's. Last, the catch-up: the
first checked withdrawal of 4 wallets that withdrew unchecked meanwhile, one at a
time, which checks every event since the wallet's newest signed snapshot (a cash-out
after much play).

BENCH_CASH_OUTS=0 skips the section. BENCH_CASH_OUTS_CLIENTS (default 16; a
comma-separated list, as BENCH_LOAD_CLIENTS) is the clients over HTTP and the
threads in process; each point runs BENCH_CASH_OUTS_SECONDS (default 3, 0.5-30),
in each of BENCH_CASH_OUTS_REPEATS passes (default 3, at most 9), and each figure
is the median of its passes. About 80 s with the defaults. Every schema, the NATS
server and its directory are removed afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nats.aio.client import Client

from benchmarks import bench_load
from benchmarks.bench_load import Cast, Connection, Step, Tally
from benchmarks.bench_rounds import POSTGRES_URL, drop_schemas
from domain.outcome import Receipt
from domain.wallet import Movement
from infra.config import Settings
from infra.logs import configure_logging
from infra.store.group_commit import GroupCommitSettings
from infra.store.money_out import MoneyOutCheck
from infra.store.seal import new_private_key
from infra.store.store import Store, open_store
from tests.infra.checkpoints.nats_server import NATS_SERVER, OPERATOR, STREAM, NatsServer

ENABLED = os.environ.get("BENCH_CASH_OUTS", "1") != "0"
SECONDS = min(30.0, max(0.5, float(os.environ.get("BENCH_CASH_OUTS_SECONDS", "3"))))
CLIENTS = tuple(
    min(100, max(1, int(n))) for n in os.environ.get("BENCH_CASH_OUTS_CLIENTS", "16").split(",")
)
REPEATS = min(9, max(1, int(os.environ.get("BENCH_CASH_OUTS_REPEATS", "3"))))
WITHDRAWAL = "0.01"
WITHDRAWAL_CENTS = 1
CATCH_UP_WALLETS = 4
# In process as `casino serve` opens its store by default.
POOL_SIZE: int = Settings.model_fields["db_pool_size"].default


async def withdraw(cast: Cast, n: int, connection: Connection, tally: Tally) -> None:
    path = f"/v1/players/{cast.players[n]}/withdrawals"
    await tally.timed(connection.ok("POST", path, {"mode": "real", "amount": WITHDRAWAL}))


def funded_players(store: Store, prefix: str, count: int) -> list[str]:
    players = [f"{prefix}{n}" for n in range(count)]
    for player in players:
        store.app.register_player(player, player)
        store.app.deposit(player, "real", bench_load.FUNDS_CENTS)
    return players


# Over HTTP.


@dataclass
class Served:
    """A server of the benchmark's, its players (who withdraw, who deposit), and how
    many checkpoints its witness holds now."""

    schema: str
    port: int
    pid: int
    cashiers: Cast
    depositors: Cast
    checkpoints: Callable[[], int]


@contextlib.contextmanager
def served(witness: str, checkpoints: Callable[[], int]) -> Iterator[Served]:
    """`casino serve` on a schema of its own, noting its checkpoints on `witness`; the
    schema dropped after. Its cashiers are funded; its depositors are others, or
    each withdrawal point would begin by checking the deposit point's events (see
    `catch_up` figures in process)."""
    schema = f"bench_cash_outs_{uuid.uuid4().hex[:8]}"
    try:
        store, keys = bench_load.keyed_store(schema)
        try:
            cashiers = Cast(funded_players(store, "cashier", max(CLIENTS)))
            depositors = Cast(funded_players(store, "depositor", max(CLIENTS)))
        finally:
            store.close()
        # One process: the witness waiting is that of one server's worker.
        with bench_load.serving(schema, keys, witness, workers=0) as (port, pid):
            yield Served(schema, port, pid, cashiers, depositors, checkpoints)
    finally:
        drop_schemas([schema])


def file_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@contextlib.contextmanager
def nats_stream(directory: Path) -> Iterator[NatsServer | None]:
    """A NATS server of the benchmark's own (a free port, `directory` its store) with
    the witness stream made by its operator, as the tests start one; stopped after.
    None where nats-server is not installed."""
    if not NATS_SERVER.is_file():
        print(f"{NATS_SERVER} is not installed: no JetStream witness point", file=sys.stderr)
        yield None
        return
    directory.mkdir(parents=True, exist_ok=True)
    server = NatsServer(directory)
    try:
        server.start()
        server.make_stream()
        yield server
    finally:
        server.stop()


def stream_messages(server: NatsServer) -> int:
    """The witness stream's messages, as its operator counts them."""

    async def count(connection: Client) -> int:
        return int((await connection.jetstream().stream_info(STREAM)).state.messages)

    return server.as_user(OPERATOR, count)


async def settle(port: int) -> None:
    """Let the server's read models catch up, so the next point is not loaded by
    this one's projection."""
    connection = await Connection.open(port)
    try:
        await bench_load.caught_up(connection)
    finally:
        connection.close()


def http_pass(points: list[tuple[str, Served, Step]], pgbench: str | None) -> dict[str, float]:
    """Each client count's pgbench and points, once each."""
    figures: dict[str, float] = {}
    schema = points[0][1].schema
    for clients in CLIENTS:
        saves = (
            bench_load.pgbench_saves_per_second(pgbench, schema, clients, SECONDS)
            if pgbench
            else 0.0
        )
        figures[f"c{clients}_pgbench_saves_per_s"] = saves
        for name, server, step in points:
            noted = server.checkpoints()
            where = (server.port, server.pid)
            cast = server.cashiers if step is withdraw else server.depositors
            tally, cpu = bench_load.point(where, cast, clients, step, SECONDS)
            noted = server.checkpoints() - noted
            figures.update(bench_load.point_figures(f"c{clients}_{name}", tally, cpu, saves))
            if step is withdraw:
                per = noted / len(tally.latencies)
                figures[f"c{clients}_{name}_checkpoints_per_withdrawal"] = per
            asyncio.run(settle(server.port))
    return figures


def over_http() -> dict[str, float]:
    pgbench = bench_load.pgbench_path()
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-cash-")))
        witness_file = directory / "witness.jsonl"
        on_file = stack.enter_context(served(str(witness_file), lambda: file_lines(witness_file)))
        points: list[tuple[str, Served, Step]] = [
            ("deposits", on_file, bench_load.deposit),
            ("withdrawals_file_witness", on_file, withdraw),
        ]
        nats = stack.enter_context(nats_stream(directory / "nats"))
        if nats is not None:
            on_stream = stack.enter_context(served(nats.url(), lambda: stream_messages(nats)))
            points.append(("withdrawals_jetstream_witness", on_stream, withdraw))
        return bench_load.medians([http_pass(points, pgbench) for _ in range(REPEATS)])


# In process: the wallet check alone.


class CountedReads:
    """The check's reads (MoneyOutCheck.reads), counting what it checks: the wallet's
    events, and the seals they are in, each of whose spans is read and hashed whole
    (infra/store/sealed_reads.py: `first_unsealed`). Bench-only instrumentation."""

    def __init__(self, reads: Any) -> None:
        self.reads = reads
        self.events = self.seals = self.sealed_events = 0
        self._lock = threading.Lock()
        self._inside = threading.local()
        covers = reads._covers

        def counted_covers(seal: Any) -> bool:
            if getattr(self._inside, "checking", False):
                with self._lock:
                    self.seals += 1
                    self.sealed_events += seal.last_position - seal.first_position + 1
            return bool(covers(seal))

        reads._covers = counted_covers  # the instance's, this store's only

    def first_unsealed(self, originator_id: uuid.UUID, after: int, up_to: int) -> int | None:
        with self._lock:
            self.events += up_to - after
        self._inside.checking = True
        try:
            found: int | None = self.reads.first_unsealed(originator_id, after, up_to)
            return found
        finally:
            self._inside.checking = False

    def counts(self) -> tuple[int, int, int]:
        with self._lock:
            return self.events, self.seals, self.sealed_events


def answer(moved: Movement) -> dict[str, Any]:
    return {"id": moved.transaction_id}


def withdrawals_from_threads(store: Store, players: list[str], seconds: float) -> list[float]:
    """Each player's thread withdrawing $0.01 with a receipt (as the API does) for
    `seconds`; every withdrawal's latency in seconds."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    def withdrawals(player: str) -> None:
        while time.perf_counter() < deadline:
            receipt: Receipt[Movement] = Receipt(uuid.uuid4().hex, "bench", answer)
            started = time.perf_counter()
            store.app.withdraw.with_receipt(receipt, player, "real", WITHDRAWAL_CENTS)
            latencies.append(time.perf_counter() - started)

    with ThreadPoolExecutor(len(players)) as pool:
        list(pool.map(withdrawals, players))
    return latencies


@dataclass
class Wallets:
    """The players whose withdrawals are checked, and those whose are not."""

    on: list[str]
    off: list[str]


def check_pass(
    store: Store, check: MoneyOutCheck, counted: CountedReads, wallets: Wallets
) -> dict[str, float]:
    """Withdrawals for SECONDS from a thread per wallet, with the check off (on
    wallets of their own), then on."""
    threads = len(wallets.on)
    named_off = f"t{threads}_in_process_check_off_bench_only"
    named_on = f"t{threads}_in_process_check_on"
    store.app.before_money_leaves = None  # bench-only: no configuration turns it off
    off, _ = timed_withdrawals(store, wallets.off, named_off)
    store.app.before_money_leaves = check
    before = counted.counts()
    on, count = timed_withdrawals(store, wallets.on, named_on)
    events, seals, sealed = (now - then for now, then in zip(counted.counts(), before, strict=True))
    rate_on = on[f"{named_on}_withdrawals_per_s"]
    rate_off = off[f"{named_off}_withdrawals_per_s"]
    return {
        **off,
        **on,
        f"t{threads}_events_checked_per_withdrawal": events / count,
        f"t{threads}_seals_checked_per_withdrawal": seals / count,
        f"t{threads}_sealed_events_read_per_withdrawal": sealed / count,
        f"t{threads}_check_cost_percent": 100 * (1 - rate_on / rate_off),
    }


def catch_up(store: Store, counted: CountedReads, players: list[str]) -> dict[str, float]:
    """Each of `players`' first withdrawal with the check on, one at a time: it checks
    every event since the wallet's newest signed snapshot (a wallet snapshots every
    200 events), saved while the check was off."""
    events = counted.counts()[0]
    started = time.perf_counter()
    for player in players:
        store.app.withdraw(player, "real", WITHDRAWAL_CENTS)
    seconds = time.perf_counter() - started
    events = counted.counts()[0] - events
    return {
        "catch_up_events_checked_per_wallet": events / len(players),
        "catch_up_withdrawal_ms": seconds * 1000 / len(players),
        "catch_up_ms_per_event_checked": seconds * 1000 / events if events else 0.0,
    }


def timed_withdrawals(store: Store, players: list[str], name: str) -> tuple[dict[str, float], int]:
    """Withdrawals from a thread per player for SECONDS: per second, p50, p99 and this
    process's CPU per withdrawal (PostgreSQL's not included); and how many."""
    cpu, started = time.process_time(), time.perf_counter()
    latencies = sorted(withdrawals_from_threads(store, players, SECONDS))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    count = len(latencies)
    return {
        f"{name}_withdrawals_per_s": count / seconds,
        f"{name}_p50_ms": statistics.median(latencies) * 1000,
        f"{name}_p99_ms": latencies[min(count - 1, int(count * 0.99))] * 1000,
        f"{name}_cpu_ms_per_withdrawal": cpu * 1000 / count,
    }, count


def wallet_check() -> dict[str, float]:
    schema = f"bench_cash_outs_{uuid.uuid4().hex[:8]}"
    store = open_store(
        POSTGRES_URL,
        postgres_schema=schema,
        seal_key=new_private_key(),
        pool_size=POOL_SIZE,
        group_commit=GroupCommitSettings(),
    )
    try:
        check = store.app.before_money_leaves
        assert isinstance(check, MoneyOutCheck), "a sealed store checks before money leaves"
        counted = CountedReads(check.reads)
        check.reads = counted  # type: ignore[assignment]
        figures: dict[str, float] = {}
        for threads in CLIENTS:
            wallets = Wallets(
                funded_players(store, f"t{threads}on", threads),
                funded_players(store, f"t{threads}off", threads),
            )
            store.app.before_money_leaves = check
            for player in wallets.on:  # its events so far checked, untimed
                store.app.withdraw(player, "real", WITHDRAWAL_CENTS)
            passes = [check_pass(store, check, counted, wallets) for _ in range(REPEATS)]
            figures.update(bench_load.medians(passes))
        figures.update(catch_up(store, counted, wallets.off[:CATCH_UP_WALLETS]))
        return figures
    finally:
        store.close()
        drop_schemas([schema])


def run() -> dict[str, float]:
    if not ENABLED:
        return {}
    configure_logging("warning")
    return {**over_http(), **wallet_check()}


if __name__ == "__main__":
    for figure, value in run().items():
        print(f"  {figure:66s} {value:14.4f}")
