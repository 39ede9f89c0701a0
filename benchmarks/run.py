"""`make bench`: every benchmark in one run, figures printed (not asserted)."""

from __future__ import annotations

import time

from benchmarks import (
    bench_baccarat_engine,
    bench_blackjack_rounds,
    bench_blackjack_sim,
    bench_bonus,
    bench_cash_outs,
    bench_group_commit,
    bench_load,
    bench_projections,
    bench_providers,
    bench_rounds,
    bench_seals,
    bench_tables,
    bench_tenants,
    bench_verify,
    bench_wallets,
)


def section(title: str, figures: dict[str, float]) -> None:
    print(f"\n== {title}")
    width = max([48, *map(len, figures)])
    for name, value in figures.items():
        print(f"  {name:{width}s} {value:14.4f}")


def main() -> None:
    started = time.perf_counter()
    section("wallets: deposits through the application vs raw PostgreSQL", bench_wallets.run())
    section(
        "group commit: deposits from 16 threads on PostgreSQL, with and without",
        bench_group_commit.run(),
    )
    section("seals: deposits and P2P rounds with sealing on and off", bench_seals.run())
    section("baccarat: pure engine and exact odds", bench_baccarat_engine.run())
    section("baccarat rounds: house and P2P, application and HTTP", bench_rounds.run())
    section(
        "bonus money: a house round with an active bonus against one without (at most 1.2x)",
        bench_bonus.run(),
    )
    section(
        "American tables: fourteen-player coups beside single-player house rounds",
        bench_tables.run(),
    )
    section(
        "blackjack rounds: through the application on both stores", bench_blackjack_rounds.run()
    )
    section("blackjack: basic-strategy simulation", bench_blackjack_sim.run(1_000_000))
    section(
        "read models: rebuild of a 200,000-event log, and lag under P2P load",
        bench_projections.run(),
    )
    section(
        "audit verify: one process against a5f856a's two (BENCH_VERIFY_BASE=its checkout),"
        " and incremental against full (BENCH_VERIFY=0 skips)",
        bench_verify.run(),
    )
    section(
        "load over HTTP: casino serve on PostgreSQL at 1-64 clients, beside pgbench"
        " (BENCH_LOAD=0 skips)",
        bench_load.run(),
    )
    section(
        "cash-outs: deposits and withdrawals over HTTP at 16 clients (file and JetStream"
        " witness) beside pgbench; the wallet check in process, on and off (off: bench-only,"
        " not a configuration) (BENCH_CASH_OUTS=0 skips)",
        bench_cash_outs.run(),
    )
    section(
        "third-party games: a provider's bet and win over HTTP at 16 clients beside our own"
        " deposits and pgbench (BENCH_PROVIDERS=0 skips)",
        bench_providers.run(),
    )
    section(
        "tenants: deposits over HTTP at 16 clients, one tenant and four on two clusters in one"
        " process, beside pgbench on each cluster (BENCH_TENANTS=0 skips)",
        bench_tenants.run(),
    )
    print(f"\nall benchmarks took {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
