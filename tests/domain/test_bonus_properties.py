"""Bonus money's properties (rules.md 9), by Hypothesis over random sequences of grants,
deposits, bets in house and player-banked games, settlements, bets taken back,
withdrawals, forfeits and expiries on one real wallet.

After every step: no money created or lost (every event's postings sum to zero, so the
trial balance is zero), the bonus account and every bonus never negative, what a
bonus holds within its balance, the wallet replays from its events to the same state,
and a withdrawal of all the available cash is always possible and leaves the bonus
untouched.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from domain.bonus import ENDED, Grant
from domain.errors import DomainError
from domain.wallet import CASINO_BANK, Wallet

NOW = datetime.datetime(2026, 12, 7, tzinfo=datetime.UTC)
ROUNDS = ("r0", "r1", "r2")
cents = st.integers(min_value=1, max_value=20_000)
rounds = st.sampled_from(ROUNDS)


class BonusWallet(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.wallet = Wallet("alice", "real")
        self.events: list[Any] = self.wallet.collect_events()
        self.house: dict[str, bool] = {}  # round -> staked in a house game
        self.bonus_ids = 0
        self.days = 0

    def _keep(self) -> None:
        self.events += self.wallet.collect_events()

    def _try(self, command: Any) -> None:
        before = copy.deepcopy(self.wallet.__dict__)
        try:
            command()
        except DomainError:
            self.wallet.collect_events()
            assert self.wallet.__dict__ == before, "a refusal changed the wallet"
        self._keep()

    @rule(amount=cents, wagering=st.integers(1, 3), cap=st.none() | cents)
    def grant(self, amount: int, wagering: int, cap: int | None) -> None:
        self.bonus_ids += 1
        grant = Grant(amount, wagering, 1 + self.days % 5, max_conversion_cents=cap)
        self._try(lambda: self.wallet.grant_bonus(f"b{self.bonus_ids}", grant, 10, NOW))

    @rule(amount=cents)
    def deposit(self, amount: int) -> None:
        self._try(lambda: self.wallet.deposit("t", amount))

    @rule(round_id=rounds, amount=cents, house=st.booleans(), surebet=st.booleans())
    def bet(self, round_id: str, amount: int, house: bool, surebet: bool) -> None:
        house = self.house.setdefault(round_id, house)  # a round is one game
        self._try(lambda: self.wallet.hold(round_id, amount, house=house, surebet=surebet))

    @rule(round_id=rounds, multiple=st.sampled_from([0, 1, 2, 3, 19]), counted=cents)
    def settle(self, round_id: str, multiple: int, counted: int) -> None:
        held = self.wallet.round_held_cents(round_id)
        if not held:
            return
        # What the round returns: nothing, the stake, twice it, 3x, or a 9:1 tie (x10/2).
        net = held * multiple // 2 - held
        house = self.house.pop(round_id)
        counter = CASINO_BANK if house else None
        if counter is None:  # another player posts the other leg: the dealer's
            self.wallet.settle(round_id, net, "player:dealer", counted)
        else:
            self.wallet.settle(round_id, net, counter, counted)
        self._keep()

    @rule(round_id=rounds, part=st.integers(1, 100))
    def take_back(self, round_id: str, part: int) -> None:
        held = self.wallet.round_held_cents(round_id)
        if held:
            self._try(lambda: self.wallet.release(round_id, max(1, held * part // 100)))
            if not self.wallet.round_held_cents(round_id):
                self.house.pop(round_id, None)

    @rule(amount=cents)
    def withdraw(self, amount: int) -> None:
        self._try(lambda: self.wallet.withdraw("t", amount))

    @rule(which=st.integers(0, 5))
    def forfeit(self, which: int) -> None:
        running = [b for b in self.wallet.bonuses_in_order() if b["status"] not in ENDED]
        if running:
            bonus_id = running[which % len(running)]["bonus_id"]
            self._try(lambda: self.wallet.forfeit_bonus(bonus_id, "player"))

    @rule(days=st.integers(1, 6))
    def time_passes(self, days: int) -> None:
        self.days += days
        now = NOW + datetime.timedelta(days=self.days)
        for bonus in list(self.wallet.bonuses_in_order()):
            self.wallet.expire_bonus(bonus["bonus_id"], now)
        self._keep()

    @invariant()
    def no_money_is_created_or_lost(self) -> None:
        for event in self.events:
            assert sum(cents for _, cents in getattr(event, "postings", ())) == 0, event

    @invariant()
    def the_bonus_is_never_negative(self) -> None:
        wallet = self.wallet
        assert wallet.bonus_cents >= 0 and wallet.available_cents >= 0
        assert wallet.bonus_cents == sum(b["balance_cents"] for b in wallet.bonuses.values())
        for bonus in wallet.bonuses.values():
            assert 0 <= bonus["held_cents"] <= bonus["balance_cents"]
        assert wallet.bonus_held_cents == sum(b["held_cents"] for b in wallet.bonuses.values())

    @invariant()
    def the_wallet_replays_from_its_events(self) -> None:
        replayed = None
        for event in self.events:
            replayed = event.mutate(replayed)
        if replayed is not None:
            assert replayed.__dict__ == self.wallet.__dict__

    @invariant()
    def all_the_cash_can_always_be_withdrawn_and_never_the_bonus(self) -> None:
        trial = copy.deepcopy(self.wallet)
        bonus = trial.bonus_cents, copy.deepcopy(trial.bonuses)
        if trial.available_cents:
            trial.withdraw("all", trial.available_cents)
        assert trial.available_cents == 0
        assert (trial.bonus_cents, trial.bonuses) == bonus


def test_bonus_money_is_never_created_lost_or_withdrawn() -> None:
    run_state_machine_as_test(
        BonusWallet,
        settings=settings(
            max_examples=150,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
