"""Bonus money on both stores: a bonus a restarted server's worker still expires, and a
store with bonuses that verifies clean (rules.md 9)."""

from __future__ import annotations

import datetime

import pytest

from domain.bonus import Grant
from domain.errors import InsufficientFunds
from infra.audit.verify import verify
from infra.store.store import Store
from infra.workers import BonusExpiryWorker
from tests.conftest import StoreFactory, every_store_event
from tests.domain.tables.test_steps import NOW, Clock

DAY = datetime.timedelta(days=1)


def test_a_bonus_still_expires_when_due_after_a_restart(stores: StoreFactory, store: Store) -> None:
    store.app.clock = Clock()
    store.app.register_player("alice", "Alice")
    bonus = store.app.grant_bonus("alice", Grant(10_000, 10, 1)).result
    waiting = store.app.grant_bonus("alice", Grant(500, 1, 2)).result
    stores.close(store)
    restarted = stores.open()
    worker = BonusExpiryWorker(restarted)
    assert worker.expire_due_bonuses(NOW + DAY - datetime.timedelta(microseconds=1)) == []
    assert worker.expire_due_bonuses(NOW + DAY) == [f"alice {bonus['bonus_id']}"]
    assert worker.expire_due_bonuses(NOW + DAY) == []  # expired once
    wallet = restarted.app.wallet("alice", "real")
    assert wallet.bonuses[bonus["bonus_id"]]["status"] == "expired"
    assert wallet.active_bonus_id == waiting["bonus_id"]  # the next in line starts
    assert wallet.bonus_cents == 500
    recorded = every_store_event(restarted)
    kinds = [e.kind for e in recorded if type(e).__qualname__ == "SignificantEvent.Created"]
    assert kinds == ["bonus_granted", "bonus_granted", "bonus_expired"]


def test_a_store_with_bonuses_verifies_clean(store: Store) -> None:
    store.app.clock = Clock()
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 2_000)
    store.app.grant_bonus("alice", Grant(10_000, 1, 30))
    round_id = store.app.open_house_round("alice", "real", ["9", "K", "K", "K"]).result.round_id
    store.app.place_bet(round_id, "player", 5_000)
    store.app.deal(round_id)
    wallet = store.app.wallet("alice", "real")
    assert (wallet.balance_cents, wallet.bonus_cents) == (4_000, 13_000)
    assert verify(store, None, lambda _: None).problems == []


def test_a_bonus_past_its_expiry_is_neither_staked_nor_converted_before_the_worker_runs(
    store: Store,
) -> None:
    clock = store.app.clock = Clock()
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1_000)
    staked = store.app.grant_bonus("alice", Grant(5_000, 1, 1)).result
    # A round staked under it before its expiry, settled after: it counts nothing.
    held = store.app.open_house_round("alice", "real", ["9", "K", "K", "K"]).result.round_id
    store.app.place_bet(held, "player", 3_000)  # 1,000 cash, 2,000 bonus
    clock.now = NOW + DAY
    store.app.deal(held)  # won: would have met the wagering and converted
    wallet = store.app.wallet("alice", "real")
    assert wallet.bonuses[staked["bonus_id"]]["status"] == "expired"
    assert (wallet.balance_cents, wallet.bonus_cents) == (2_000, 0)  # bonus share: casino's
    # A bonus already past its expiry is not staked.
    late = store.app.grant_bonus("alice", Grant(5_000, 1, 1)).result
    clock.now = NOW + 2 * DAY
    round_id = store.app.open_house_round("alice", "real", ["9", "K", "K", "K"]).result.round_id
    with pytest.raises(InsufficientFunds):
        store.app.place_bet(round_id, "player", 3_000)
    store.app.place_bet(round_id, "player", 2_000)  # cash only: the expiry ends it
    wallet = store.app.wallet("alice", "real")
    assert wallet.bonuses[late["bonus_id"]]["status"] == "expired"
    assert (wallet.bonus_rounds, wallet.bonus_cents) == ({}, 0)
    assert BonusExpiryWorker(store).expire_due_bonuses(NOW + 2 * DAY) == []
    recorded = every_store_event(store)
    kinds = [e.kind for e in recorded if type(e).__qualname__ == "SignificantEvent.Created"]
    assert kinds.count("bonus_expired") == 2 and "bonus_converted" not in kinds
    assert verify(store, None, lambda _: None).problems == []
