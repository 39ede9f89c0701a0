"""Bonus money in a provider's game (rules.md 9, 10), given / when / then: a bet takes
cash, then the bonus where the provider allows it; a win and a rollback give the bonus
share back where that bonus's money went; the round's end counts its stakes."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from domain.bonus import CASINO_BONUS, Grant, Split
from domain.errors import BonusMaxBet, InsufficientFunds
from domain.providers.audit import verify_provider_round
from domain.providers.provider import games_account
from domain.providers.round import BY_PROVIDER, ProviderRound
from domain.rounds import WalletEntry
from domain.wallet import Wallet, topic_of
from tests.domain.events import given, kinds, then

NOW = datetime.datetime(2026, 12, 7, 12, 0, tzinfo=datetime.UTC)
HOUR = 3_600
HOUSE = games_account("acme")


def granted(cash: int = 3_000, amount: int = 10_000, wagering: int = 1, **options: Any) -> Wallet:
    """Alice's real wallet with `cash` and one active bonus, "b1"."""
    wallet = Wallet("alice", "real")
    wallet.deposit("t1", cash)
    wallet.grant_bonus("b1", Grant(amount, wagering, 30, **options), 10, NOW)
    return given(wallet)


def round_() -> ProviderRound:
    return given(ProviderRound("acme", "alice", "r1", "g", "real", NOW.isoformat(), None))


def bet(wallet: Wallet, played: ProviderRound, tx: str, cents: int, allowed: bool = True) -> Split:
    """What the bet step does: the wallet takes the stake, the round records its split."""
    under = allowed and played.takes_bonus(wallet.active_bonus_id)
    bonus_id = wallet.active_bonus_id if under else None
    taken = wallet.take_stake(played.round_id, tx, cents, HOUSE, under)
    played.take_bet(tx, cents, NOW, HOUR, taken, bonus_id)
    return taken


def win(wallet: Wallet, played: ProviderRound, tx: str, cents: int) -> None:
    played.pay_win(tx, cents, None, NOW)
    share = played.win_split(cents)
    wallet.credit(played.round_id, tx, "win", cents, HOUSE, share.bonus_cents, played.bonus_id)


def rollback(wallet: Wallet, played: ProviderRound, tx: str, bet_tx: str) -> None:
    back = played.roll_back(tx, bet_tx, NOW, HOUR)
    cents = back.cash_cents + back.bonus_cents
    wallet.credit(played.round_id, tx, "rollback", cents, HOUSE, back.bonus_cents, played.bonus_id)


def posted(wallet: Wallet) -> list[list[Any]]:
    [(_, fields)] = [event for event in then(wallet) if "postings" in event[1]]
    assert sum(cents for _, cents in fields["postings"]) == 0  # the books balance
    return list(fields["postings"])


def test_a_bet_takes_cash_then_the_bonus_where_the_provider_allows_it() -> None:
    wallet, played = granted(cash=3_000), round_()
    assert bet(wallet, played, "x1", 5_000) == Split(3_000, 2_000)
    [(kind, fields)] = then(wallet)
    assert kind == "StakeTaken"
    assert fields["postings"] == [["player:alice", -3_000], ["bonus:alice", -2_000], [HOUSE, 5_000]]
    assert (fields["bonus_id"], fields["bonus_cents"]) == ("b1", 2_000)
    assert (wallet.balance_cents, wallet.bonus_cents, wallet.bonus_available_cents) == (
        0, 8_000, 8_000,
    )  # fmt: skip
    assert then(played)[0][1] | {"at": None} == {
        "transaction_id": "x1", "amount_cents": 5_000, "at": None, "bonus_id": "b1",
        "bonus_cents": 2_000,
    }  # fmt: skip


def test_a_provider_that_allows_no_bonus_takes_cash_only() -> None:
    wallet, played = granted(cash=3_000), round_()
    assert bet(wallet, played, "x1", 3_000, allowed=False) == Split(3_000, 0)
    assert posted(wallet) == [["player:alice", -3_000], [HOUSE, 3_000]]
    given(played)
    with pytest.raises(InsufficientFunds) as refused:
        bet(wallet, played, "x2", 100, allowed=False)  # the bonus would have covered it
    assert refused.value.facts["balance"] == "0.00"
    assert then(wallet) == [] and then(played) == []
    assert played.wagered_cents == 0  # nothing counts towards the bonus


def test_a_bet_above_the_bonus_maximum_stake_is_refused_and_changes_nothing() -> None:
    wallet, played = granted(cash=3_000, max_bet_cents=4_000), round_()
    with pytest.raises(BonusMaxBet):
        bet(wallet, played, "x1", 4_001)
    assert then(wallet) == [] and then(played) == []
    assert bet(wallet, played, "x2", 4_000) == Split(3_000, 1_000)


def test_funds_short_of_cash_and_bonus_are_refused_with_the_balance_the_provider_sees() -> None:
    wallet, played = granted(cash=3_000, amount=1_000), round_()
    with pytest.raises(InsufficientFunds) as refused:
        bet(wallet, played, "x1", 4_001)
    assert refused.value.facts["balance"] == "40.00"
    assert then(wallet) == []


def test_a_win_is_split_in_the_proportion_of_the_stakes_the_bonus_share_rounded_down() -> None:
    wallet, played = granted(cash=3_000), round_()
    bet(wallet, played, "x1", 5_000)
    given(wallet), given(played)
    win(wallet, played, "w1", 1_001)  # bonus 1_001 * 2_000 // 5_000 = 400
    assert then(played)[0][1]["bonus_cents"] == 400
    assert posted(wallet) == [["player:alice", 601], ["bonus:alice", 400], [HOUSE, -1_001]]
    assert (wallet.balance_cents, wallet.bonus_cents) == (601, 8_400)


def test_a_rollback_gives_back_each_part_where_it_came_from() -> None:
    wallet, played = granted(cash=3_000), round_()
    bet(wallet, played, "x1", 5_000)
    given(wallet), given(played)
    rollback(wallet, played, "y1", "x1")
    assert posted(wallet) == [["player:alice", 3_000], ["bonus:alice", 2_000], [HOUSE, -5_000]]
    assert (wallet.balance_cents, wallet.bonus_cents) == (3_000, 10_000)
    assert played.staked == Split(0, 0) and played.wagered_cents == 0


def test_a_bonus_forfeited_before_the_rollback_gets_nothing_back_casino_bonus_does() -> None:
    wallet, played = granted(cash=3_000), round_()
    bet(wallet, played, "x1", 5_000)
    wallet.forfeit_bonus("b1", "forfeited by the player")
    given(wallet), given(played)
    rollback(wallet, played, "y1", "x1")
    assert posted(wallet) == [["player:alice", 3_000], [CASINO_BONUS, 2_000], [HOUSE, -5_000]]
    assert (wallet.balance_cents, wallet.bonus_cents) == (3_000, 0)


def test_a_win_after_its_bonus_converted_pays_the_bonus_share_in_cash() -> None:
    wallet, played = granted(cash=3_000, amount=2_000), round_()
    bet(wallet, played, "x1", 5_000)  # all 2_000 of the bonus staked
    other = given(ProviderRound("acme", "alice", "r2", "g", "real", NOW.isoformat(), None))
    wallet.deposit("t2", 2_000)
    bet(wallet, other, "x2", 2_000)  # cash only, under the bonus: meets 1x 2_000
    other.end(NOW, BY_PROVIDER)
    wallet.count_wagering(other.round_id, other.bonus_id, other.wagered_cents)
    assert wallet.bonus("b1")["status"] == "converted"
    given(wallet), given(played)
    win(wallet, played, "w1", 10_000)  # bonus share 4_000, to cash now
    assert posted(wallet) == [["player:alice", 10_000], [HOUSE, -10_000]]
    assert wallet.bonus_cents == 0


def test_the_rounds_stakes_under_the_bonus_count_at_its_end_and_may_convert() -> None:
    wallet, played = granted(cash=3_000, amount=2_000, wagering=2), round_()
    bet(wallet, played, "x1", 3_000)
    bet(wallet, played, "x2", 1_000)
    bet(wallet, played, "x3", 1_000)
    rollback(wallet, played, "y3", "x3")  # a bet rolled back counts nothing
    given(wallet)
    assert played.wagered_cents == 4_000
    played.end(NOW, BY_PROVIDER)
    wallet.count_wagering(played.round_id, played.bonus_id, played.wagered_cents)
    assert kinds(wallet) == ["BonusWagered", "BonusConverted"]
    assert (wallet.bonus("b1")["status"], wallet.balance_cents, wallet.bonus_cents) == (
        "converted", 1_000, 0,
    )  # fmt: skip


def test_stakes_short_of_the_requirement_count_and_convert_nothing() -> None:
    wallet, played = granted(cash=3_000, amount=2_000, wagering=2), round_()
    bet(wallet, played, "x1", 1_000)
    given(wallet)
    wallet.count_wagering(played.round_id, played.bonus_id, played.wagered_cents)
    assert then(wallet) == [
        ("BonusWagered", {"round_id": played.round_id, "bonus_id": "b1", "wagered_cents": 1_000})
    ]
    assert wallet.bonus("b1")["wagered_cents"] == 1_000


def test_a_round_whose_bonus_ended_takes_cash_only_for_the_next_one() -> None:
    wallet = Wallet("alice", "real")
    wallet.deposit("t1", 1_000)
    wallet.grant_bonus("b1", Grant(1_000, 1, 30), 10, NOW)
    wallet.grant_bonus("b2", Grant(1_000, 1, 30), 10, NOW)
    played = round_()
    bet(wallet, played, "x1", 1_500)
    wallet.forfeit_bonus("b1", "forfeited by the player")  # b2 starts
    with pytest.raises(InsufficientFunds):
        bet(wallet, played, "x2", 100)  # b2's money is not this round's
    assert played.takes_bonus("b2") is False


def played_with_bonus() -> tuple[list[Any], list[WalletEntry]]:
    wallet = granted(cash=3_000)
    played = ProviderRound("acme", "alice", "r1", "g", "real", NOW.isoformat(), None)
    bet(wallet, played, "x1", 5_000)
    bet(wallet, played, "x2", 100)
    rollback(wallet, played, "y2", "x2")
    win(wallet, played, "w1", 1_001)
    played.end(NOW, BY_PROVIDER)
    wallet.count_wagering(played.round_id, played.bonus_id, played.wagered_cents)
    entries = [WalletEntry("alice", topic_of(e), e) for e in wallet.collect_events()]
    return list(played.collect_events()), entries


def test_the_audit_finds_a_round_with_bonus_parts_balanced() -> None:
    assert verify_provider_round(*played_with_bonus()) == []


def test_the_audit_names_a_win_whose_bonus_share_is_not_in_proportion() -> None:
    events, entries = played_with_bonus()
    [win_event] = [event for event in events if topic_of(event).endswith("WinPaid")]
    object.__setattr__(win_event, "bonus_cents", 0)
    problems = verify_provider_round(events, entries)
    assert any("w1's bonus share 0 is not in the proportion" in p for p in problems)
    assert any("do not match the round's calls" in p for p in problems)
