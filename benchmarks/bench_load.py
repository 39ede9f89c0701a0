"""Load over HTTP: `casino serve` on PostgreSQL under 1, 4, 16 and 64 clients, beside
what the same database does with the save this design needs.

Three workloads, each client on its own players or table (so the figures measure
the server, not conflicts between clients): deposits; P2P rounds with confirm
(confirm, bet, deal); P2P rounds with auto-confirm (bet, deal: the deal's answer
names the next round). Each prints commands/s, rounds/s, the p50/p99 latency
of one command, and the server's CPU time per command (its processes', summed
from /proc: on a machine others use too, the steadiest figure). Beside them,
pgbench runs on the same server, at the same concurrency, the save of this
design's shape in one round trip (table lock, a 10-row insert, NOTIFY, commit),
and each workload's ratio to it is printed.
Last, `GET /v1/p2p/tables/{id}` once its table has played 1,500 rounds: 1,000 GETs
at once (p50, p99, the slowest), and 1,000 more once the read models caught up.

The load generator is bounded and lean: one asyncio task per client, each with
one keep-alive connection and one request in flight, written and read as plain
HTTP/1.1 so the generator's own CPU stays small beside the server's (both share
this machine). Each point runs BENCH_LOAD_SECONDS (default 3), in each of
BENCH_LOAD_REPEATS passes (default 3); each figure is the median of its passes.
BENCH_LOAD=0 skips the section; BENCH_LOAD_CLIENTS (default 1,4,16,64) and BENCH_LOAD_WORKERS
(`casino serve --workers`, default 0: the option is not passed) change it.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

from benchmarks.bench_rounds import POSTGRES_URL, drop_schemas
from domain.providers.signing import signature_of
from infra.logs import configure_logging
from infra.secrets import AesGcmBox, new_key, parse_key
from infra.store.seal import new_private_key, private_key_text
from infra.store.store import Store, open_store

ENABLED = os.environ.get("BENCH_LOAD", "1") != "0"
SECONDS = min(30.0, max(0.5, float(os.environ.get("BENCH_LOAD_SECONDS", "3"))))
CLIENTS = tuple(
    min(100, max(1, int(n))) for n in os.environ.get("BENCH_LOAD_CLIENTS", "1,4,16,64").split(",")
)
WORKERS = min(16, max(0, int(os.environ.get("BENCH_LOAD_WORKERS", "0"))))
REPEATS = min(9, max(1, int(os.environ.get("BENCH_LOAD_REPEATS", "3"))))
HISTORY_ROUNDS = 1500  # the table the GET's p99 is measured at has played this many
GETS = 1000
CATCH_UP_SECONDS_MAX = 60.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SERVER_START_SECONDS_MAX = 60
FUNDS_CENTS = 10_000_000_00
HEADERS = "Authorization: Bearer dev-service\r\n"
# The save of this design's shape, in one round trip (`\;` joins the statements).
PGBENCH_SCRIPT = (
    "BEGIN \\; LOCK TABLE {table} IN EXCLUSIVE MODE \\;"
    " INSERT INTO {table} (originator_id, originator_version, topic, state)"
    " SELECT gen_random_uuid(), n, 'bench', convert_to(repeat('x', 300), 'UTF8')"
    " FROM generate_series(1, 10) AS n \\; NOTIFY {channel} \\; COMMIT;\n"
)


class Connection:
    """One keep-alive HTTP/1.1 connection, one request at a time."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, headers: str = HEADERS
    ) -> None:
        self.reader, self.writer, self.headers = reader, writer, headers

    @classmethod
    async def open(cls, port: int, headers: str = HEADERS) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, headers)

    async def call(
        self, method: str, path: str, body: object = None, secret: str | None = None
    ) -> tuple[int, bytes]:
        """The call and its answer; with `secret`, a provider's call: signed, no key."""
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n{self.headers}"
        if secret is not None:
            head += f"X-Casino-Signature: {signature_of(secret, payload)}\r\n"
        elif method == "POST":
            head += f"Idempotency-Key: {uuid.uuid4().hex}\r\n"
        if payload:
            head += "Content-Type: application/json\r\n"
        self.writer.write(f"{head}Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
        answer_head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(answer_head[9:12])
        length = 0
        for line in answer_head.lower().split(b"\r\n"):
            if line.startswith(b"content-length:"):
                length = int(line[15:])
        return status, await self.reader.readexactly(length)

    async def ok(
        self, method: str, path: str, body: object = None, secret: str | None = None
    ) -> dict[str, object]:
        status, payload = await self.call(method, path, body, secret)
        if status not in (200, 201):
            raise RuntimeError(f"{method} {path}: {status} {payload[:300]!r}")
        answer: dict[str, object] = json.loads(payload)
        return answer

    def close(self) -> None:
        self.writer.close()


@dataclass
class Tally:
    """What the clients of one point did: each command's latency, and rounds played."""

    latencies: list[float] = field(default_factory=list)
    rounds: int = 0
    seconds: float = 0.0

    async def timed(self, call: Awaitable[dict[str, object]]) -> dict[str, object]:
        started = time.perf_counter()
        answer = await call
        self.latencies.append(time.perf_counter() - started)
        return answer


@dataclass
class Cast:
    """Per client: a player to deposit to, a table to confirm at, an auto-confirm table
    with its open round."""

    players: list[str]
    tables: list[str] = field(default_factory=list)
    auto_tables: list[str] = field(default_factory=list)
    auto_rounds: list[str] = field(default_factory=list)
    auto_played: list[int] = field(default_factory=list)


def set_up(store: Store, clients: int) -> Cast:
    app = store.app
    cast = Cast([])
    for n in range(clients):
        player = f"depositor{n}"
        app.register_player(player, player)
        cast.players.append(player)
        cast.tables.append(_seat(store, f"c{n}", auto_confirm=False))
        auto = _seat(store, f"a{n}", auto_confirm=True)
        cast.auto_tables.append(auto)
        round_id = app.p2p_table(auto).round_id
        assert round_id is not None
        cast.auto_rounds.append(round_id)
        cast.auto_played.append(0)
    return cast


def _seat(store: Store, name: str, *, auto_confirm: bool) -> str:
    app = store.app
    dealer, player = f"{name}dealer", f"{name}player"
    for who in (dealer, player):
        app.register_player(who, who)
        app.deposit(who, "real", FUNDS_CENTS)
    app.adjust_points(dealer, "real", 10_000_000, "bench")
    table = app.sit_as_dealer(dealer, "real", "II", auto_confirm=auto_confirm).result
    assert table is not None
    app.join_as_player(player, "real", "II")
    return table.table_id


# The workloads: one client's loop body, (cast, client number, connection, tally).
Step = Callable[[Cast, int, Connection, Tally], Awaitable[None]]


async def deposit(cast: Cast, n: int, connection: Connection, tally: Tally) -> None:
    path = f"/v1/players/{cast.players[n]}/deposits"
    await tally.timed(connection.ok("POST", path, {"mode": "real", "amount": "1.00"}))


async def p2p_round(cast: Cast, n: int, connection: Connection, tally: Tally) -> None:
    opened = await tally.timed(connection.ok("POST", f"/v1/p2p/tables/{cast.tables[n]}/confirm"))
    round_id = opened["round_id"]
    bet = {"spot": "player", "amount": "10.00"}
    await tally.timed(connection.ok("POST", f"/v1/rounds/{round_id}/bets", bet))
    await tally.timed(connection.ok("POST", f"/v1/rounds/{round_id}/deal"))
    tally.rounds += 1


async def auto_round(cast: Cast, n: int, connection: Connection, tally: Tally) -> None:
    round_id = cast.auto_rounds[n]
    bet = {"spot": "banker", "amount": "10.00"}
    await tally.timed(connection.ok("POST", f"/v1/rounds/{round_id}/bets", bet))
    dealt = await tally.timed(connection.ok("POST", f"/v1/rounds/{round_id}/deal"))
    following = dealt.get("next_round")
    if not isinstance(following, dict):  # A server that does not say: ask the table.
        table = await tally.timed(connection.ok("GET", f"/v1/p2p/tables/{cast.auto_tables[n]}"))
        following = table["current_round"]
    assert isinstance(following, dict), dealt
    cast.auto_rounds[n] = str(following["round_id"])
    cast.auto_played[n] += 1
    tally.rounds += 1


async def drive(port: int, cast: Cast, clients: int, step: Step, seconds: float) -> Tally:
    """`clients` clients each running `step` over and over for `seconds`."""
    tally = Tally()
    connections = [await Connection.open(port) for _ in range(clients)]
    deadline = time.perf_counter() + seconds

    async def client(n: int) -> None:
        while time.perf_counter() < deadline:
            await step(cast, n, connections[n], tally)

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    tally.seconds = time.perf_counter() - started
    for connection in connections:
        connection.close()
    return tally


def tree_cpu_seconds(pid: int) -> float:
    """CPU time used so far by a process and its descendants (the server's workers and
    projector): a figure that, unlike throughput, a busy machine hardly moves."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue  # ended meanwhile
        total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        pending += [int(child) for child in children]
    return total


def figures_of(tally: Tally) -> tuple[float, float, float, float]:
    """commands/s, rounds/s, p50 ms, p99 ms."""
    latencies = sorted(tally.latencies)
    p50, p99 = statistics.median(latencies) * 1000, _p99(latencies) * 1000
    return len(latencies) / tally.seconds, tally.rounds / tally.seconds, p50, p99


def _p99(ordered: list[float]) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def pgbench_path() -> str | None:
    found = shutil.which("pgbench")
    if found is not None:
        return found
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench"))
    return candidates[-1] if candidates else None


def pgbench_saves_per_second(
    executable: str, schema: str, clients: int, seconds: float = SECONDS, url: str = POSTGRES_URL
) -> float:
    """pgbench's transactions/s running the one-trip save at `clients` connections, on
    the database at `url`."""
    table = f"{schema}.bench_saves"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")  # type: ignore[arg-type]
        connection.execute(  # type: ignore[call-overload]
            f"CREATE TABLE IF NOT EXISTS {table} (notification_id BIGSERIAL PRIMARY KEY,"
            " originator_id UUID NOT NULL, originator_version INTEGER NOT NULL,"
            " topic TEXT NOT NULL, state BYTEA)"
        )
    where = httpx.URL(url)
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(PGBENCH_SCRIPT.format(table=table, channel=f"{schema}_bench"))
    command = [
        executable, "-n", "-f", script.name, "-c", str(clients), "-j", str(min(clients, 2)),
        "-T", str(max(1, round(seconds))), "-h", where.host, "-p", str(where.port or 5432),
        "-U", where.username or "postgres", where.path.lstrip("/") or "postgres",
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    finally:
        os.unlink(script.name)
    for line in done.stdout.splitlines():
        if line.startswith("tps = "):
            return float(line.split()[2])
    # Not worth failing the benchmark over (too many connections, say): no ratio then.
    print(f"pgbench at {clients} clients failed: {done.stderr.strip()[-300:]}", file=sys.stderr)
    return 0.0


def keyed_store(schema: str) -> tuple[Store, dict[str, str]]:
    """A new store on the schema with fresh seal and secret keys, and the settings that
    give `casino serve` the same keys: the set-up done here and the load served there
    need both, or the server could open no round the set-up opened (its seed is
    sealed). Close the store before serving."""
    seal_key, secret_key = new_private_key(), new_key()
    keys = {"CASINO_SEAL_KEY": private_key_text(seal_key), "CASINO_SECRET_KEY": secret_key}
    store = open_store(
        POSTGRES_URL,
        postgres_schema=schema,
        seal_key=seal_key,
        box=AesGcmBox(parse_key(secret_key)),
    )
    return store, keys


@contextlib.contextmanager
def serving(
    schema: str, settings: dict[str, str], witness: str, workers: int = WORKERS
) -> Iterator[tuple[int, int]]:
    """`casino serve` in a process of its own on the schema, noting its checkpoints on
    `witness` (CASINO_WITNESS: a file of the benchmark's own, or a stream; never the
    default var/witness.jsonl of the working directory, whose last checkpoint notes a
    seal of an earlier run's schema, which the server would refuse to chain on);
    yields its port and pid."""
    env = {
        "CASINO_DATABASE_URL": POSTGRES_URL,
        "CASINO_POSTGRES_SCHEMA": schema,
        "CASINO_WITNESS": witness,
        **settings,
    }
    with serve_process(env, workers) as served:
        yield served


@contextlib.contextmanager
def serve_process(settings: dict[str, str], workers: int = 0) -> Iterator[tuple[int, int]]:
    """`casino serve` on a free port with `settings` over this process's environment,
    logging warnings only; yields its port and pid, and ends it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    env = {**os.environ, "CASINO_LOG_LEVEL": "warning", **settings}
    command = [sys.executable, "-m", "infra.cli", "serve", "--port", str(port)]
    if workers:
        command += ["--workers", str(workers)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    try:
        _wait_until_up(port)
        yield port, server.pid
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_until_up(port: int) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS_MAX
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"http://127.0.0.1:{port}/v1/health/live").status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the server on port {port} did not start")


async def table_reads(port: int, cast: Cast) -> dict[str, float]:
    """Play the first auto-confirm table up to HISTORY_ROUNDS rounds, then GET it
    GETS times at once (the projector process still catching up beside the server),
    and GETS times again once the read models have caught up (`/v1/health`'s lag 0):
    the p99 of 1,000 is its tenth-worst GET, not one stall."""
    connection = await Connection.open(port)
    tally = Tally()
    while cast.auto_played[0] < HISTORY_ROUNDS:
        await auto_round(cast, 0, connection, tally)
    path = f"/v1/p2p/tables/{cast.auto_tables[0]}"
    at_once = await _latencies(connection, path)
    lag = await caught_up(connection)  # 0 unless the wait ran out: printed, not hidden
    caught_up_latencies = await _latencies(connection, path)
    connection.close()
    name = f"get_p2p_table_after_{HISTORY_ROUNDS}_rounds"
    return {
        f"{name}_p50_ms": statistics.median(at_once),
        f"{name}_p99_ms": _p99(at_once),
        f"{name}_max_ms": at_once[-1],
        f"{name}_caught_up_p99_ms": _p99(caught_up_latencies),
        f"{name}_caught_up_lag_events": float(lag),
    }


async def caught_up(connection: Connection) -> int:
    """Wait (CATCH_UP_SECONDS_MAX at most) until the read models have caught up with the
    log; the events they are still behind (0 unless the wait ran out)."""
    deadline = time.monotonic() + CATCH_UP_SECONDS_MAX
    while await _lag(connection) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return await _lag(connection)


async def _lag(connection: Connection) -> int:
    """How many events the read models are behind the log."""
    projections = (await connection.ok("GET", "/v1/health"))["projections"]
    assert isinstance(projections, dict)
    return int(projections["lag"])


async def _latencies(connection: Connection, path: str) -> list[float]:
    """GETS of `path`, in ms, sorted."""
    latencies = []
    for _ in range(GETS):
        started = time.perf_counter()
        status, _ = await connection.call("GET", path)
        latencies.append((time.perf_counter() - started) * 1000)
        assert status == 200
    return sorted(latencies)


WORKLOADS: tuple[tuple[str, Step], ...] = (
    ("deposits", deposit),
    ("p2p_confirm", p2p_round),
    ("p2p_auto_confirm", auto_round),
)


def point(
    served: tuple[int, int], cast: Cast, clients: int, step: Step, seconds: float = SECONDS
) -> tuple[Tally, float]:
    """One workload at one client count on the server (port, pid): what the clients
    did, and the server's CPU seconds meanwhile."""
    port, pid = served
    cpu = tree_cpu_seconds(pid)
    tally = asyncio.run(drive(port, cast, clients, step, seconds))
    return tally, tree_cpu_seconds(pid) - cpu


def point_figures(name: str, tally: Tally, cpu: float, saves: float) -> dict[str, float]:
    """A point's figures, each named `name_...`: commands/s, rounds/s (when it played
    any), p50 and p99, the server's CPU per command, and the ratio to pgbench's saves/s
    (when pgbench ran)."""
    commands, rounds, p50, p99 = figures_of(tally)
    figures = {
        f"{name}_commands_per_s": commands,
        f"{name}_server_cpu_ms_per_command": cpu * 1000 / len(tally.latencies),
    }
    if rounds:
        figures[f"{name}_rounds_per_s"] = rounds
    figures[f"{name}_p50_ms"] = p50
    figures[f"{name}_p99_ms"] = p99
    if saves:
        figures[f"{name}_ratio_to_pgbench"] = commands / saves
    return figures


def one_pass(port: int, pid: int, cast: Cast, pgbench: str | None, schema: str) -> dict[str, float]:
    """Every client count's pgbench and workloads, once each."""
    figures: dict[str, float] = {}
    for clients in CLIENTS:
        saves = pgbench_saves_per_second(pgbench, schema, clients) if pgbench else 0.0
        figures[f"c{clients}_pgbench_saves_per_s"] = saves
        for name, step in WORKLOADS:
            tally, cpu = point((port, pid), cast, clients, step)
            figures.update(point_figures(f"c{clients}_{name}", tally, cpu, saves))
    return figures


def medians(passes: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over the passes that have it (pgbench may fail once)."""
    names = dict.fromkeys(name for one in passes for name in one)
    return {name: statistics.median(one[name] for one in passes if name in one) for name in names}


def run() -> dict[str, float]:
    if not ENABLED:
        return {}
    configure_logging("warning")
    schema = f"bench_load_{uuid.uuid4().hex[:8]}"
    figures: dict[str, float] = {}
    pgbench = pgbench_path()
    try:
        store, keys = keyed_store(schema)
        cast = set_up(store, max(CLIENTS))
        store.close()
        with (
            tempfile.TemporaryDirectory(prefix="bench-load-") as directory,
            serving(schema, keys, str(Path(directory) / "witness.jsonl")) as (port, pid),
        ):
            # Each pass measures every point once, pgbench beside it; a figure is the
            # median over the passes (this machine's drift moves single runs by a fifth).
            passes = [one_pass(port, pid, cast, pgbench, schema) for _ in range(REPEATS)]
            figures = medians(passes)
            figures.update(asyncio.run(table_reads(port, cast)))
    finally:
        drop_schemas([schema])
    return figures


if __name__ == "__main__":
    for figure, value in run().items():
        print(f"  {figure:48s} {value:14.4f}")
