"""A provider's round and the wallet's side of its calls, given / when / then
(rules.md 10): each call's events, which are stored forever."""

from __future__ import annotations

import datetime

import pytest

from domain.bonus import Split
from domain.errors import (
    DuplicateTransaction,
    InsufficientFunds,
    NoBetInRound,
    RoundClosed,
    RoundTransactionsExceeded,
)
from domain.providers.provider import GameSession, games_account
from domain.providers.round import (
    BY_PROVIDER,
    INACTIVE,
    TRANSACTIONS_PER_ROUND_MAX,
    ProviderRound,
    lapsed,
)
from domain.wallet import Wallet
from tests.domain.events import given, kinds, then

NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)
HOUR = 3_600


def round_() -> ProviderRound:
    return given(ProviderRound("acme", "alice", "r1", "starburst", "real", NOW.isoformat(), "0.96"))


def test_a_bet_is_recorded_with_its_transaction_and_time() -> None:
    played = round_()
    played.take_bet("b1", 1_000, NOW, HOUR)
    assert then(played) == [
        ("BetTaken", {"transaction_id": "b1", "amount_cents": 1_000, "at": NOW.isoformat(),
                      "bonus_id": None, "bonus_cents": 0})
    ]  # fmt: skip


def test_the_wallet_takes_a_stake_at_once_against_the_providers_account() -> None:
    wallet = given(Wallet("alice", "real"), lambda w: w.deposit("t1", 5_000))
    assert wallet.take_stake("round-1", "b1", 1_000, games_account("acme")) == Split(1_000, 0)
    assert then(wallet) == [
        ("StakeTaken", {"round_id": "round-1", "transaction_id": "b1", "amount_cents": 1_000,
                        "postings": [["player:alice", -1_000], ["casino:games:acme", 1_000]],
                        "balance_after_cents": 4_000, "bonus_id": None, "bonus_cents": 0}),
    ]  # fmt: skip
    assert wallet.holds == {}


def test_a_stake_over_what_is_available_is_refused_with_the_balance() -> None:
    wallet = given(Wallet("alice", "real"), lambda w: w.deposit("t1", 500))
    with pytest.raises(InsufficientFunds) as refused:
        wallet.take_stake("round-1", "b1", 501, games_account("acme"))
    assert refused.value.facts["balance"] == "5.00"
    assert then(wallet) == []


def test_a_win_and_a_rollback_credit_the_player_from_the_providers_account() -> None:
    wallet = given(Wallet("alice", "real"), lambda w: w.deposit("t1", 500))
    wallet.credit("round-1", "w1", "win", 0, games_account("acme"))
    wallet.credit("round-1", "x1", "rollback", 200, games_account("acme"))
    assert [(kind, fields["kind"], fields["postings"]) for kind, fields in then(wallet)] == [
        ("Credited", "win", [["player:alice", 0], ["casino:games:acme", 0]]),
        ("Credited", "rollback", [["player:alice", 200], ["casino:games:acme", -200]]),
    ]


def test_a_rollback_gives_back_what_its_bet_took_and_the_bet_is_gone() -> None:
    played = given(round_(), lambda r: r.take_bet("b1", 700, NOW, HOUR))
    assert played.roll_back("x1", "b1", NOW, HOUR) == Split(700, 0)
    assert kinds(played) == ["BetRolledBack"]
    assert (played.bets, played.rolled_back, played.staked_cents) == ({}, {"b1": 700}, 0)


def test_a_round_ended_by_its_provider_takes_no_bet_win_or_rollback() -> None:
    played = given(
        round_(), lambda r: r.take_bet("b1", 700, NOW, HOUR), lambda r: r.end(NOW, BY_PROVIDER)
    )
    for call in (
        lambda: played.take_bet("b2", 1, NOW, HOUR),
        lambda: played.pay_win("w1", 1, None, NOW),
        lambda: played.roll_back("x1", "b1", NOW, HOUR),
    ):
        with pytest.raises(RoundClosed):
            call()
    assert played.end(NOW, BY_PROVIDER) is False
    assert then(played) == []


def test_a_round_without_calls_takes_no_bet_but_a_late_win_lands() -> None:
    played = given(round_(), lambda r: r.take_bet("b1", 700, NOW, HOUR))
    an_hour_on = NOW + datetime.timedelta(seconds=HOUR)
    assert lapsed(played.last_call_at, an_hour_on, HOUR)
    with pytest.raises(RoundClosed):
        played.take_bet("b2", 1, an_hour_on, HOUR)
    assert played.end(an_hour_on, INACTIVE) is True
    played.pay_win("w1", 2_000, "b1", an_hour_on)
    assert kinds(played) == ["Ended", "WinPaid"]
    assert played.end(an_hour_on, BY_PROVIDER) is True  # the provider's end still counts
    with pytest.raises(RoundClosed):
        played.pay_win("w2", 1, None, an_hour_on)


def test_a_win_needs_a_bet_in_the_round_and_each_transaction_counts_once() -> None:
    played = round_()
    with pytest.raises(NoBetInRound):
        played.pay_win("w1", 100, None, NOW)
    played.take_bet("b1", 100, NOW, HOUR)
    with pytest.raises(NoBetInRound):
        played.pay_win("w1", 100, "b9", NOW)
    played.pay_win("w1", 100, "b1", NOW)
    with pytest.raises(DuplicateTransaction):
        played.pay_win("w1", 100, "b1", NOW)
    with pytest.raises(DuplicateTransaction):
        played.take_bet("b1", 100, NOW, HOUR)


def test_a_round_takes_a_bounded_number_of_calls() -> None:
    played = round_()
    for n in range(TRANSACTIONS_PER_ROUND_MAX):
        played.take_bet(f"b{n}", 1, NOW, HOUR)
    with pytest.raises(RoundTransactionsExceeded):
        played.take_bet("one-more", 1, NOW, HOUR)


def test_a_session_expires_after_its_lifetime_without_calls_and_stays_expired() -> None:
    opened = GameSession.open(
        "tok", "acme", "alice", "g", "real", NOW.isoformat(), HOUR, None, False
    )
    session = given(opened)
    session.touch(NOW + datetime.timedelta(seconds=30))
    assert then(session) == []  # noted at most once a minute
    session.touch(NOW + datetime.timedelta(seconds=90))
    assert kinds(session) == ["Called"]
    session.touch(NOW + datetime.timedelta(seconds=90 + HOUR))
    assert then(session) == []
    assert session.expires_at == NOW + datetime.timedelta(seconds=90 + HOUR)
