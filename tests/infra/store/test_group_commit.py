"""Group commit on both stores: concurrent commands share transactions, and each is
still applied exactly once with its own answer, even when the process dies between a
batch's commit and its answers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from domain.outcome import Receipt
from infra.store.store import Store
from tests.conftest import StoreFactory

THREADS = 8
DEPOSITS_EACH = 15
KILLED_EXIT = 137


def remembered(key: str) -> Receipt:
    return Receipt(key, "fingerprint", lambda movement: {"id": movement.transaction_id})


def test_concurrent_commands_share_transactions_and_each_lands_once(store: Store) -> None:
    players = [f"p{n}" for n in range(THREADS)]
    for player in players:
        store.app.register_player(player, player)
    committer = store.group_commit
    assert committer is not None
    before = committer.counts.transactions, committer.counts.saves

    def deposits(player: str) -> list[int]:
        # Two threads also pay into each shared wallet: conflicts within batches.
        shared = f"p{int(player[1:]) % (THREADS // 2)}"
        positions = []
        for n in range(DEPOSITS_EACH):
            positions.append(store.app.deposit(player, "real", 100 + n).position)
            positions.append(store.app.deposit(shared, "play", 1).position)
        return positions

    with ThreadPoolExecutor(THREADS) as pool:
        positions = [p for found in pool.map(deposits, players) for p in found]

    assert len(set(positions)) == len(positions) == 2 * THREADS * DEPOSITS_EACH
    expected = sum(100 + n for n in range(DEPOSITS_EACH))
    for player in players:
        assert store.app.wallet(player, "real").balance_cents == expected
    for player in players[: THREADS // 2]:
        assert store.app.wallet(player, "play").balance_cents == 2 * DEPOSITS_EACH
    transactions = committer.counts.transactions - before[0]
    saves = committer.counts.saves - before[1]
    assert saves == 2 * THREADS * DEPOSITS_EACH
    assert transactions < saves  # some commands shared a transaction


KILL_AFTER_A_SHARED_COMMIT = """
import os, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from domain.outcome import Receipt
from infra.store.store import open_store

url, schema, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(url, postgres_schema=schema, pool_size=2)
for n in range(threads):
    store.app.register_player(f"p{n}", f"p{n}")
recorder = store.app.recorder
insert = recorder.insert_events

def insert_then_die(stored, **kwargs):
    # The first save holds the store a moment, so the others gather behind it; the
    # batch after it commits, and the process dies before anyone hears of it.
    receipts = kwargs.get("receipts") or []
    if len(receipts) == 1 and not getattr(insert_then_die, "held", False):
        insert_then_die.held = True
        time.sleep(0.3)
    ids = insert(stored, **kwargs)
    if len(receipts) > 1:
        print(len(receipts), flush=True)
        os._exit(137)
    return ids

recorder.insert_events = insert_then_die

def deposit(n):
    receipt = Receipt(f"k{n}", "fingerprint", lambda m: {"id": m.transaction_id})
    store.app.deposit.with_receipt(receipt, f"p{n}", "real", 100 + n)

with ThreadPoolExecutor(threads) as pool:
    list(pool.map(deposit, range(threads)))
"""


def test_a_kill_after_a_batch_commits_but_before_any_answer_loses_and_doubles_nothing(
    stores: StoreFactory, tmp_path: Path
) -> None:
    script = tmp_path / "kill_after_commit.py"
    script.write_text(textwrap.dedent(KILL_AFTER_A_SHARED_COMMIT))
    died = subprocess.run(
        [sys.executable, str(script), stores.url, stores.schema, str(THREADS)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[3],
    )
    assert died.returncode == KILLED_EXIT, died.stderr
    committed_unanswered = json.loads(died.stdout.strip())
    assert committed_unanswered > 1

    store = stores.open()  # the restarted server; every client sends its request again
    replayed = 0
    for n in range(THREADS):
        outcome = store.app.deposit.with_receipt(remembered(f"k{n}"), f"p{n}", "real", 100 + n)
        replayed += outcome.replayed
    assert replayed >= committed_unanswered  # the batch (and any save answered before it)
    for n in range(THREADS):
        assert store.app.wallet(f"p{n}", "real").balance_cents == 100 + n
