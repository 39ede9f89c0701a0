"""The auditor's check of a provider's round (domain/providers/audit.py): its money
balances, and a wallet entry missing, changed or added is named."""

from __future__ import annotations

import datetime
from typing import Any

from domain.providers.audit import verify_provider_round
from domain.providers.provider import games_account
from domain.providers.round import BY_PROVIDER, ProviderRound
from domain.rounds import WalletEntry
from domain.wallet import Wallet, topic_of

NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)
HOUR = 3_600


def played() -> tuple[list[Any], list[WalletEntry]]:
    """A round of two bets, one rolled back, and a win; its events and its entries."""
    round_ = ProviderRound("acme", "alice", "r1", "g", "real", NOW.isoformat(), None)
    wallet = Wallet("alice", "real")
    wallet.deposit("t0", 10_000)
    wallet.collect_events()
    house = games_account("acme")
    round_.take_bet("b1", 1_000, NOW, HOUR)
    wallet.take_stake(round_.round_id, "b1", 1_000, house)
    round_.take_bet("b2", 300, NOW, HOUR)
    wallet.take_stake(round_.round_id, "b2", 300, house)
    given = round_.roll_back("x1", "b2", NOW, HOUR)
    wallet.credit(round_.round_id, "x1", "rollback", given.cash_cents, house)
    round_.pay_win("w1", 2_500, "b1", NOW)
    wallet.credit(round_.round_id, "w1", "win", 2_500, house)
    round_.end(NOW, BY_PROVIDER)
    entries = [WalletEntry("alice", topic_of(e), e) for e in wallet.collect_events()]
    return list(round_.collect_events()), entries


def test_an_honest_round_balances() -> None:
    assert verify_provider_round(*played()) == []


def test_a_missing_credit_is_named_and_the_books_do_not_balance() -> None:
    events, entries = played()
    problems = verify_provider_round(events, entries[:-1])
    assert any("do not match the round's calls" in p and "'w1'" in p for p in problems)
    assert any(
        "stakes 1300 are not rollbacks and wins 2800 plus the house's result 1000" in p
        for p in problems
    )


def test_an_entry_for_another_player_is_named() -> None:
    events, entries = played()
    entries[0] = WalletEntry("mallory", entries[0].topic, entries[0].event)
    problems = verify_provider_round(events, entries)
    assert any("mallory's wallet posted for another's round" in p for p in problems)
