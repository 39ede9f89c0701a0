"""Every player's bank at a table is held on their wallet, and nothing else is.

A coup's own check (domain/tables/audit.py) sees the coup and the wallet entries for
it; it cannot tell whether a bank released whole was given up (lost, withdrawn, its
banker gone) or released while the table played on with it. The table says: its
`BankPutUp`, `BankMoved` and `BankGivenUp` events give each table's bank and banker,
and the wallets' `BankHeld` and `BankReleased` give what each player holds for each
table. After the last event, each table's banker must hold exactly the bank, and
everyone else nothing for that table.
"""

from __future__ import annotations

from typing import Any

from domain import wallet as wallet_topics
from infra.audit.chain_check import Problems

PUT_UP = "casino:Table.BankPutUp"
MOVED = "casino:Table.BankMoved"
GIVEN_UP = "casino:Table.BankGivenUp"


class BankCheck:
    def __init__(self) -> None:
        self.problems = Problems("banks")
        self.owners: dict[Any, str] = {}  # wallet id -> player id
        self.banks: dict[str, tuple[str | None, int]] = {}  # table id -> (banker, bank)
        self.held: dict[tuple[str, str], int] = {}  # (table id, player id) -> cents

    def add(self, event: Any) -> None:
        topic = wallet_topics.topic_of(event)
        if topic == wallet_topics.OPENED:
            self.owners[event.originator_id] = event.player_id
        elif topic in (wallet_topics.BANK_HELD, wallet_topics.BANK_RELEASED):
            sign = 1 if topic == wallet_topics.BANK_HELD else -1
            key = (str(event.table_id), self.owners.get(event.originator_id, "?"))
            self.held[key] = self.held.get(key, 0) + sign * int(event.amount_cents)
        elif topic == PUT_UP:
            self.banks[str(event.originator_id)] = (event.player_id, int(event.bank_cents))
        elif topic == MOVED:
            banker = self.banks.get(str(event.originator_id), (None, 0))[0]
            self.banks[str(event.originator_id)] = (banker, int(event.bank_after_cents))
        elif topic == GIVEN_UP:
            self.banks[str(event.originator_id)] = (None, 0)

    def finish(self) -> list[str]:
        tables = {table for table, _ in self.held} | set(self.banks)
        for table in sorted(tables):
            banker, bank = self.banks.get(table, (None, 0))
            holders = {player for t, player in self.held if t == table}
            if banker is not None:
                holders.add(banker)
            for player in sorted(holders):
                due = bank if player == banker else 0
                held = self.held.get((table, player), 0)
                if held != due:
                    self.problems.add(
                        f"table {table}: {player}'s wallet holds {held} for its bank, "
                        f"the table says {due}"
                    )
        return self.problems.all()
