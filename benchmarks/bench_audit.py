"""`casino audit verify` on a big store: how long it takes and how much memory it holds.

`python -m benchmarks.bench_audit fill URL EVENTS [SCHEMA]` fills a store through
the application (deposits, house and P2P baccarat rounds, blackjack rounds) until
it holds at least EVENTS events; `python -m benchmarks.bench_audit verify URL
[SCHEMA]` runs the verification in this process and prints its time and peak
resident memory; `python -m benchmarks.bench_audit rebuild URL [SCHEMA]` does the
same for `casino projections rebuild --check` (rebuild aside and compare). Both
print events per second of wall clock and per CPU-second (of this process; not the
database server's). SCHEMA is the PostgreSQL
schema (default `public`).
Not part of `make bench`: filling 100,000 events takes a few minutes.
"""

from __future__ import annotations

import os
import random
import resource
import sys
import time

from benchmarks.bench_blackjack_rounds import play_round
from infra.audit.rebuild import rebuild
from infra.audit.verify import verify
from infra.logs import configure_logging
from infra.store.store import Store, open_store

PLAYERS = 50
DEPOSIT_CENTS = 10_000_000_00
STAKE_CENTS = 1000


def fill(store: Store, events: int) -> int:
    app, rng = store.app, random.Random(7)
    players = [f"p{n}" for n in range(PLAYERS)]
    for player in (*players, "bench", "dealer"):
        app.register_player(player, player)
        app.deposit(player, "real", DEPOSIT_CENTS)
    app.adjust_points("dealer", "real", 10_000_000, "bench")
    table = app.sit_as_dealer("dealer", "real", "II", auto_confirm=False).result
    assert table is not None
    app.join_as_player("p0", "real", "II")
    while (count := store.app.recorder.max_notification_id() or 0) < events:
        choice = rng.random()
        if choice < 0.1:
            app.deposit(rng.choice(players), "real", 100)
        elif choice < 0.7:
            house = app.open_house_round(rng.choice(players), "real").result
            assert house is not None
            app.place_bet(house.round_id, rng.choice(("player", "banker", "tie")), STAKE_CENTS)
            app.deal(house.round_id)
        elif choice < 0.9:
            p2p = app.confirm(table.table_id).result
            assert p2p is not None
            app.place_bet(p2p.round_id, "banker", STAKE_CENTS)
            app.deal(p2p.round_id)
        else:
            play_round(store, rng.randint(1, 3))
    store.projector.catch_up()
    return count


def _cpu_seconds() -> float:
    """This process's CPU time."""
    times = os.times()
    return times.user + times.system


def main() -> None:
    configure_logging("warning")
    command, url = sys.argv[1], sys.argv[2]
    schema = (
        sys.argv[4 if command == "fill" else 3]
        if len(sys.argv) > (4 if command == "fill" else 3)
        else "public"
    )
    store = open_store(url, postgres_schema=schema)
    try:
        started, cpu = time.perf_counter(), _cpu_seconds()
        if command == "fill":
            count = fill(store, int(sys.argv[3]))
            done = f"filled {count} events"
        elif command == "rebuild":
            comparison = rebuild(store, lambda _: None, replace=False)
            count = comparison.position
            done = f"rebuilt {count} events, {len(comparison.differences)} differences"
        else:
            report = verify(store, None, lambda _: None)
            count = report.events
            done = (
                f"verified {report.events} events, {report.rounds} rounds, "
                f"{len(report.problems)} problems"
            )
        elapsed, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{done} in {elapsed:.1f} s ({cpu:.1f} s CPU); {count / elapsed:,.0f} events/s, "
            f"{count / cpu:,.0f} per CPU-second; peak RSS {peak_mib:.0f} MiB"
        )
    finally:
        store.close()


if __name__ == "__main__":
    main()
