"""`CommandSeam.arun`: the seam's rules driven on an event loop, each save awaited
(through the group commit) and each pause an `asyncio.sleep`."""

from __future__ import annotations

import asyncio

from domain.application import CasinoApplication
from domain.group_commit import GroupCommitSettings
from domain.outcome import Receipt
from domain.wallet import Movement


def grouped() -> CasinoApplication:
    app = CasinoApplication()
    app.enable_group_commit(GroupCommitSettings(wait_seconds=0.002))
    app.register_player("alice", "Alice")
    return app


def remembered(key: str) -> Receipt[Movement]:
    return Receipt(key=key, fingerprint="f", render=lambda m: {"balance": m.wallet.balance_cents})


def test_an_awaited_command_is_saved_and_answered_once_per_key() -> None:
    app = grouped()
    first = asyncio.run(app.deposit.awith_receipt(remembered("d-1"), "alice", "real", 500))
    again = asyncio.run(app.deposit.awith_receipt(remembered("d-1"), "alice", "real", 500))
    assert (first.answer, first.replayed) == ({"balance": 500}, False)
    assert (again.answer, again.replayed) == ({"balance": 500}, True)
    assert app.wallet("alice", "real").balance_cents == 500
    app.close()


def test_commands_racing_on_one_loop_for_one_wallet_are_each_applied_once() -> None:
    app = grouped()

    async def race() -> list[int]:
        deposits = [
            app.deposit.awith_receipt(remembered(f"d-{n}"), "alice", "real", 100 + n)
            for n in range(8)
        ]
        outcomes = await asyncio.gather(*deposits)
        return sorted(outcome.answer["balance"] for outcome in outcomes if outcome.answer)

    balances = asyncio.run(race())
    # Decided together on one version, gathered in one batch: all but one conflict,
    # pause and decide again, so the answers climb one deposit at a time.
    assert len(set(balances)) == 8
    assert balances[-1] == app.wallet("alice", "real").balance_cents == sum(range(100, 108))
    assert app.group_commit is not None and app.group_commit.counts.conflicts_in_batch > 0
    app.close()
