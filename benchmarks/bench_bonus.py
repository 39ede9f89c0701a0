"""A house baccarat round with an active bonus against one without (rules.md 9), through
the application on both stores: the issue's bound is 1.2x.

With the bonus, the player has no cash: every stake is bonus money (`BonusHeld`), its
result goes back to the bonus (`BonusSettled`) and counts towards a wagering
requirement too large to be met, so each round does all the bonus work there is but a
conversion (which happens once per bonus). Without, the same rounds on cash. Each is
measured three times, alternately, on a fresh store each time; the best of each counts.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable

from benchmarks.bench_rounds import ROUNDS, drop_schemas, postgres_opener, sqlite_opener
from domain.bonus import Grant
from infra.logs import configure_logging
from infra.store.store import Store

REPEATS = 3
STAKE_CENTS = 1_000


def house_rounds_per_second(store: Store, bonus: bool) -> float:
    app = store.app
    app.register_player("bench", "bench")
    if bonus:
        app.grant_bonus("bench", Grant(1_000_000_00, 10, 90))
    else:
        app.deposit("bench", "real", 1_000_000_00)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        round_ = app.open_house_round("bench", "real").result
        assert round_ is not None
        app.place_bet(round_.round_id, "banker", STAKE_CENTS)
        app.deal(round_.round_id)
    elapsed = time.perf_counter() - started
    wallet = app.wallet("bench", "real")
    assert (wallet.bonus_cents > 0) == bonus and wallet.bonus_rounds == {}
    return ROUNDS / elapsed


def run() -> dict[str, float]:
    configure_logging("warning")
    figures: dict[str, float] = {}
    schemas: list[str] = []
    with tempfile.TemporaryDirectory() as directory:
        try:
            openers: tuple[tuple[str, Callable[[], Store]], ...] = (
                ("sqlite", sqlite_opener(directory)),
                ("postgres", postgres_opener(schemas)),
            )
            for name, open_fresh in openers:
                best = {False: 0.0, True: 0.0}
                for _ in range(REPEATS):
                    for bonus in (False, True):
                        store = open_fresh()
                        best[bonus] = max(best[bonus], house_rounds_per_second(store, bonus))
                        store.close()
                figures[f"{name}_house_rounds_per_s"] = best[False]
                figures[f"{name}_house_rounds_with_bonus_per_s"] = best[True]
                figures[f"{name}_cost_with_bonus_x"] = best[False] / best[True]
        finally:
            drop_schemas(schemas)
    return figures


if __name__ == "__main__":
    for figure, value in run().items():
        print(f"{figure:45s} {value:10.3f}")
