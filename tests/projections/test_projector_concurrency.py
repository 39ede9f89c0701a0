"""The projector catching up while commands save, in the same SQLite file."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from infra.store.store import open_store

# Past the event store's 5 s wait for a pooled connection: a lock-order cycle between
# the projector and the commands would surface as errors within this time.
SECONDS = 6.0
WRITERS = 6


def test_catching_up_never_holds_commands_back_on_sqlite(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'casino.sqlite'}")
    for n in range(WRITERS):
        store.app.register_player(f"p{n}", f"p{n}")
    stop = threading.Event()
    errors: list[str] = []
    deposits = [0] * WRITERS

    def deposit(n: int) -> None:
        while not stop.is_set():
            try:
                store.app.deposit(f"p{n}", "real", 100)
                deposits[n] += 1
            except Exception as error:
                errors.append(repr(error))

    def project() -> None:
        while not stop.is_set():
            try:
                store.projector.catch_up()
            except Exception as error:
                errors.append(f"projector: {error!r}")

    threads = [threading.Thread(target=deposit, args=(n,)) for n in range(WRITERS)]
    threads.append(threading.Thread(target=project))
    for thread in threads:
        thread.start()
    time.sleep(SECONDS)
    stop.set()
    for thread in threads:
        thread.join()
    store.projector.catch_up()
    with store.database.read() as cursor:
        cursor.execute("SELECT SUM(balance_cents) FROM wallet_balances WHERE mode = 'real'")
        projected = cursor.fetchone()
    store.close()
    assert errors == []
    assert projected == (100 * sum(deposits),)
