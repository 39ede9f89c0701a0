"""`casino audit verify`: a full verify of a long log in one process, against the two
processes of an earlier checkout; and an incremental verify of new events against a
full verify of a log as long as they are.

The logs are sealed SQLite stores filled by the mixed workload (benchmarks/workload.py),
made once and kept under var/bench/ (a 200,000-event log takes minutes to fill):
BENCH_VERIFY_EVENTS long (default 200,000), and BENCH_VERIFY_NEW_EVENTS (default
10,000). Each verify runs in a process of its own, on a copy of the store, and is
timed around the call (not the imports). With BENCH_VERIFY_BASE naming a checkout of
an earlier main (`git worktree add /tmp/verify-base a5f856a`), its verify runs on
the same log in the same run, from that checkout (PYTHONPATH): the ratio of this
verify's rate to its rate. Figures are ratios (and the rates they come from).
BENCH_VERIFY=0 skips it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from benchmarks import workload
from infra.logs import configure_logging
from infra.store.store import open_store

ROOT = Path(__file__).resolve().parents[1]
KEPT = ROOT / "var" / "bench"
EVENTS = int(os.environ.get("BENCH_VERIFY_EVENTS", "200000"))
NEW_EVENTS = int(os.environ.get("BENCH_VERIFY_NEW_EVENTS", "10000"))
BASE = os.environ.get("BENCH_VERIFY_BASE", "")
SEAL_SEED = bytes(range(32))  # a bench key, the same in every run: the kept logs stay sealed
ROUNDS_A_TURN = 200
PLAYERS = 20

# Run in the verifying process: the verify of the tree on its PYTHONPATH, timed.
VERIFY = """
import sys, time
from pathlib import Path
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from infra.audit.verify import verify
from infra.logs import configure_logging
from infra.store.store import open_store
configure_logging("warning")
store = open_store("sqlite:///" + sys.argv[1], group_commit=None)
key = Ed25519PrivateKey.from_private_bytes(bytes(range(32))).public_key()
extra = {}
if len(sys.argv) > 2 and sys.argv[2] != "-":
    from infra.audit.resume import read_state_file
    extra["since"] = read_state_file(Path(sys.argv[2]))
started = time.perf_counter()
report = verify(store, None, lambda _: None, public_key=key, **extra)
elapsed = time.perf_counter() - started
assert not report.problems, report.problems[:5]
if len(sys.argv) > 3:
    from infra.audit.resume import write_state_file
    write_state_file(Path(sys.argv[3]), report.state)
store.close()
print(report.events, elapsed)
"""


def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(SEAL_SEED)


def fill(path: Path, events: int) -> int:
    """Play the workload on the store at `path` until it holds `events` more events:
    its players, if it has them already, at tables of their own (a second cast)."""
    store = open_store(f"sqlite:///{path}", seal_key=key())
    try:
        start = store.projector.head()
        if start:  # the players of the log play on, their wallets long, at new tables
            tables = workload.set_up(store, players=0, tables=4, prefix=f"at{start}-").tables
            cast = workload.Cast([f"p{n}" for n in range(PLAYERS)], tables)
        else:
            cast = workload.set_up(store, players=PLAYERS, tables=4)
        seed = start
        while store.projector.head() < start + events:
            seed += 1
            workload.play(store, cast, rounds=ROUNDS_A_TURN, seed=seed)
        store.projector.catch_up()
        return store.projector.head() - start
    finally:
        store.close()


def kept_log(events: int) -> Path:
    """A log of at least `events` events, filled once and kept."""
    path = KEPT / f"verify-{events}.sqlite"
    if not path.exists():
        KEPT.mkdir(parents=True, exist_ok=True)
        filling = path.with_name(path.name + ".filling")
        filling.unlink(missing_ok=True)
        fill(filling, events)
        filling.replace(path)
    return path


def timed_verify(
    store: Path, pythonpath: Path, since: Path | None = None, state_out: Path | None = None
) -> tuple[int, float]:
    """Events checked and seconds taken by the verify of the tree at `pythonpath`."""
    arguments = [str(store), str(since) if since else "-"]
    arguments += [str(state_out)] if state_out else []
    done = subprocess.run(
        [sys.executable, "-c", VERIFY, *arguments],
        env={**os.environ, "PYTHONPATH": str(pythonpath)},
        capture_output=True,
        text=True,
        check=True,
    )
    events, seconds = done.stdout.split()[-2:]
    return int(events), float(seconds)


def run() -> dict[str, float]:
    if os.environ.get("BENCH_VERIFY", "1") == "0":
        return {}
    configure_logging("warning")
    figures: dict[str, float] = {}
    long_log, short_log = kept_log(EVENTS), kept_log(NEW_EVENTS)
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as directory:
        work = Path(directory)
        copy = Path(shutil.copyfile(long_log, work / "long.sqlite"))
        state = work / "state.json"
        events, seconds = timed_verify(copy, ROOT, state_out=state)
        figures["full_verify_events"] = events
        figures["full_verify_one_process_events_per_s"] = events / seconds
        if BASE:
            base_events, base_seconds = timed_verify(
                Path(shutil.copyfile(long_log, work / "base.sqlite")), Path(BASE)
            )
            figures["base_two_process_events_per_s"] = base_events / base_seconds
            figures["one_process_over_base_two_process_rate"] = (events / seconds) / (
                base_events / base_seconds
            )
        figures["new_events_added"] = fill(copy, NEW_EVENTS)
        new, incremental = timed_verify(copy, ROOT, since=state)
        short_events, short = timed_verify(
            Path(shutil.copyfile(short_log, work / "short.sqlite")), ROOT
        )
        figures["incremental_events_checked"] = new
        figures["incremental_verify_s"] = incremental
        figures["short_log_events"] = short_events
        figures["full_verify_of_short_log_s"] = short
        figures["incremental_over_full_of_short_log_time"] = incremental / short
        figures["incremental_over_full_of_short_log_per_event"] = (incremental / new) / (
            short / short_events
        )
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:48s} {value:14.4f}")
