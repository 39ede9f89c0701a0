"""A stateful property test of the wallet ledger through the application, on both stores.

Hypothesis drives deposits, withdrawals, holds, releases, settlements, retried
commands and restarts from the store, and after every step checks that no
available balance is negative, the trial balance of each mode is zero, the
state rebuilt from the stored events equals the live state, and a retried
command applied once.
"""

import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from domain.errors import InsufficientFunds
from domain.ids import wallet_uuid
from domain.outcome import Receipt
from domain.wallet import CASINO_BANK, Wallet, load_wallet
from projections import balances
from tests.conftest import StoreFactory

PLAYERS = ("p0", "p1", "p2")
MODES = ("real", "play")
ROUNDS = ("r0", "r1", "r2")
cents = st.integers(min_value=1, max_value=50_000)
players = st.sampled_from(PLAYERS)
modes = st.sampled_from(MODES)
rounds = st.sampled_from(ROUNDS)


class WalletLedger(RuleBasedStateMachine):
    backend = "sqlite"

    @initialize()
    def open_store(self) -> None:
        self.factory = StoreFactory(self.backend, Path(tempfile.mkdtemp()))
        self.store = self.factory.open()
        self.balance: dict[tuple[str, str], int] = {}
        self.holds: dict[tuple[str, str], dict[str, int]] = {}
        for player in PLAYERS:
            self.store.app.register_player(player, player)
            for mode in MODES:
                self.balance[player, mode] = 0
                self.holds[player, mode] = {}

    def teardown(self) -> None:
        if hasattr(self, "factory"):
            self.factory.close_all()

    def available(self, player: str, mode: str) -> int:
        return self.balance[player, mode] - sum(self.holds[player, mode].values())

    @rule(player=players, mode=modes, amount=cents)
    def deposit(self, player: str, mode: str, amount: int) -> None:
        self.store.app.deposit(player, mode, amount)
        self.balance[player, mode] += amount

    @rule(player=players, mode=modes, amount=cents)
    def withdraw(self, player: str, mode: str, amount: int) -> None:
        if amount > self.available(player, mode):
            with pytest.raises(InsufficientFunds):
                self.store.app.withdraw(player, mode, amount)
            return
        self.store.app.withdraw(player, mode, amount)
        self.balance[player, mode] -= amount

    @rule(player=players, mode=modes, round_id=rounds, amount=cents)
    def hold(self, player: str, mode: str, round_id: str, amount: int) -> None:
        command = self._on_wallet(player, mode, lambda w: w.hold(round_id, amount))
        if amount > self.available(player, mode):
            with pytest.raises(InsufficientFunds):
                self.store.commands.run(command)
            return
        self.store.commands.run(command)
        held = self.holds[player, mode]
        held[round_id] = held.get(round_id, 0) + amount

    @rule(player=players, mode=modes, round_id=rounds, whole=st.booleans())
    def release(self, player: str, mode: str, round_id: str, whole: bool) -> None:
        held = self.holds[player, mode].get(round_id)
        if held is None:
            return
        amount = held if whole or held == 1 else held // 2
        release = self._on_wallet(player, mode, lambda w: w.release(round_id, amount))
        self.store.commands.run(release)
        if amount == held:
            del self.holds[player, mode][round_id]
        else:
            self.holds[player, mode][round_id] = held - amount

    @rule(player=players, mode=modes, round_id=rounds, data=st.data())
    def settle(self, player: str, mode: str, round_id: str, data: Any) -> None:
        held = self.holds[player, mode].get(round_id)
        if held is None:
            return
        net = data.draw(st.integers(min_value=-held, max_value=2 * held), label="net")
        settle = self._on_wallet(player, mode, lambda w: w.settle(round_id, net, CASINO_BANK))
        self.store.commands.run(settle)
        del self.holds[player, mode][round_id]
        self.balance[player, mode] += net

    @rule(player=players, mode=modes, amount=cents, times=st.integers(min_value=2, max_value=4))
    def retried_deposit(self, player: str, mode: str, amount: int, times: int) -> None:
        receipt = Receipt(uuid.uuid4().hex, "fingerprint", lambda m: {"id": m.transaction_id})
        answers = [
            self.store.app.deposit.with_receipt(receipt, player, mode, amount) for _ in range(times)
        ]
        assert [a.replayed for a in answers] == [False] + [True] * (times - 1)
        assert all(a.answer == answers[0].answer for a in answers)
        self.balance[player, mode] += amount

    @rule()
    def restart(self) -> None:
        self.factory.close(self.store)
        self.store = self.factory.open()

    @invariant()
    def live_state_matches_the_model_and_never_overdraws(self) -> None:
        for player in PLAYERS:
            for mode in MODES:
                wallet = self.store.app.wallet(player, mode)
                assert wallet.available_cents >= 0
                assert wallet.balance_cents == self.balance[player, mode]
                assert wallet.holds == self.holds[player, mode]

    @invariant()
    def state_rebuilt_from_the_stored_events_equals_the_live_state(self) -> None:
        for player in PLAYERS:
            for mode in MODES:
                rebuilt = None
                for event in self.store.app.events.get(wallet_uuid(player, mode)):
                    rebuilt = event.mutate(rebuilt)
                assert isinstance(rebuilt, Wallet)
                assert vars(rebuilt) == vars(self.store.app.wallet(player, mode))

    @invariant()
    def trial_balance_of_each_mode_is_zero_and_agrees_with_the_wallets(self) -> None:
        self.store.projector.catch_up()
        with self.store.database.read() as cursor:
            for mode in MODES:
                accounts = dict(balances.trial_balance(cursor, mode))
                assert sum(accounts.values()) == 0
                for player in PLAYERS:
                    assert accounts.get(f"player:{player}", 0) == self.balance[player, mode]

    def _on_wallet(self, player: str, mode: str, change: Any) -> Any:
        def command(unit: Any) -> None:
            change(load_wallet(unit, player, mode))

        return command


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_the_wallet_ledger_keeps_its_invariants(
    backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "postgres" and not request.getfixturevalue("postgres_up"):
        pytest.skip("PostgreSQL is not reachable")
    machine = type("Ledger", (WalletLedger,), {"backend": backend})
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=25 if backend == "sqlite" else 12,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
