"""The books (`casino audit verify`): each mode's postings, summed from the wallets'
events as the log is read, total zero and agree with the trial-balance read model;
and every wallet, replayed from its events, agrees with its read models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain import wallet as wallet_topics
from infra.audit.chain_check import Problems, VersionCheck, name_of
from infra.audit.snapshot_check import wallet_problems
from infra.store.store import Store
from projections import balances
from projections.runner import position_in


def note_owner(wallets: dict[Any, tuple[str, str]], event: Any) -> None:
    """A wallet opened: its id -> (player id, mode)."""
    if wallet_topics.topic_of(event) == wallet_topics.OPENED:
        wallets[event.originator_id] = (event.player_id, event.mode)


class BookCheck:
    """Each mode's postings, summed from the wallets' events."""

    def __init__(self) -> None:
        self.problems = Problems("the books")
        self.wallets: dict[Any, tuple[str, str]] = {}  # wallet id -> (player id, mode)
        self.books: dict[str, dict[str, int]] = {}
        self.touched: set[Any] = set()  # the wallets with events in this pass

    def add(self, position: int, event: Any) -> None:
        note_owner(self.wallets, event)
        if event.originator_id in self.wallets:
            self.touched.add(event.originator_id)
        postings = getattr(event, "postings", None)
        if not postings:
            return
        owner = self.wallets.get(event.originator_id)
        if owner is None:
            self.problems.add(
                f"event at position {position} ({name_of(event)}) carries postings, but its "
                "aggregate is no wallet opened in the store"
            )
            return
        accounts = self.books.setdefault(owner[1], {})
        for account, cents in postings:
            accounts[account] = accounts.get(account, 0) + cents

    def finish(self, store: Store, up_to: int) -> list[str]:
        for mode, accounts in self.books.items():
            if sum(accounts.values()) != 0:
                self.problems.add(
                    f"the {mode} trial balance totals {sum(accounts.values())} cents, not 0"
                )
        with store.database.read() as cursor:
            if position_in(cursor) != up_to:
                return self.problems.all()  # Another moment: the rebuild compare covers it.
            for mode, accounts in self.books.items():
                projected = dict(balances.trial_balance(cursor, mode))
                if projected != {a: c for a, c in accounts.items() if c or a in projected}:
                    self.problems.add(
                        f"the {mode} trial-balance read model disagrees with the events"
                    )
        return self.problems.all()

    def wallet_problems(
        self, store: Store, up_to: int, versions: VersionCheck, start: Mapping[Any, Any] | None
    ) -> tuple[list[str], dict[Any, Any]]:
        """Every wallet replayed from its events up to where this pass stopped (from
        `start`: the wallets of an earlier verify, and only those with events since),
        compared with the read models when they stand there too
        (infra/audit/snapshot_check.py); and the wallets replayed."""
        with store.database.read() as cursor:
            here = position_in(cursor) == up_to  # else another moment: the rebuild covers it
        wallets = self.wallets if start is None else {
            wallet: self.wallets[wallet] for wallet in self.touched if wallet in self.wallets
        }  # fmt: skip
        last = {wallet: versions.due.get(str(wallet), 1) - 1 for wallet in wallets}
        return wallet_problems(store, wallets, last, start, compare=here)
