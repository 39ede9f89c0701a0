"""The wallet aggregate, given / when / then, without a store."""

import pytest

from domain.errors import InsufficientFunds, InvalidAmount, UnknownHold
from domain.wallet import CASINO_BANK, Wallet


def funded(cents: int = 10_000) -> Wallet:
    wallet = Wallet("alice", "real")
    wallet.deposit("t1", cents)
    return wallet


def replayed(wallet: Wallet) -> Wallet:
    """The wallet rebuilt from its own events, as the store would."""
    copy = None
    for event in wallet.collect_events():
        copy = event.mutate(copy)
    assert isinstance(copy, Wallet)
    return copy


def test_a_deposit_raises_balance_and_posts_against_the_cashier() -> None:
    wallet = funded(1050)
    assert (wallet.balance_cents, wallet.held_cents, wallet.available_cents) == (1050, 0, 1050)
    deposited = wallet.pending_events[-1]
    assert deposited.postings == [["player:alice", 1050], ["cashier", -1050]]


def test_a_withdrawal_above_available_is_refused_and_changes_nothing() -> None:
    wallet = funded(1000)
    wallet.hold("r1", 600)
    with pytest.raises(InsufficientFunds) as refused:
        wallet.withdraw("t2", 401)
    assert refused.value.facts == {"available": "4.00", "shortfall": "0.01"}
    assert (wallet.balance_cents, wallet.available_cents) == (1000, 400)


def test_a_hold_reserves_money_without_moving_it() -> None:
    wallet = funded(1000)
    wallet.hold("r1", 300)
    wallet.hold("r1", 200)
    assert (wallet.balance_cents, wallet.held_cents, wallet.available_cents) == (1000, 500, 500)


def test_a_hold_above_available_is_refused() -> None:
    wallet = funded(1000)
    with pytest.raises(InsufficientFunds):
        wallet.hold("r1", 1001)


def test_releasing_part_of_a_hold_keeps_the_rest() -> None:
    wallet = funded(1000)
    wallet.hold("r1", 500)
    wallet.release("r1", 200)
    assert wallet.holds == {"r1": 300}
    wallet.release("r1")
    assert wallet.holds == {}


@pytest.mark.parametrize("amount", [0, -1, 501])
def test_releasing_nothing_or_more_than_held_is_refused(amount: int) -> None:
    wallet = funded(1000)
    wallet.hold("r1", 500)
    with pytest.raises(InvalidAmount):
        wallet.release("r1", amount)


def test_releasing_a_hold_that_does_not_exist_is_refused() -> None:
    with pytest.raises(UnknownHold):
        funded().release("nope")


def test_settling_a_lost_round_releases_the_hold_and_pays_the_bank() -> None:
    wallet = funded(1000)
    wallet.hold("r1", 400)
    wallet.settle("r1", -400, CASINO_BANK)
    assert (wallet.balance_cents, wallet.held_cents) == (600, 0)
    assert wallet.pending_events[-1].postings == [["player:alice", -400], [CASINO_BANK, 400]]
    assert wallet.last_round == {"round_id": "r1", "net_cents": -400, "commission_cents": 0}


def test_a_dealer_commission_is_taken_from_the_round_result() -> None:
    wallet = funded(200_000)
    wallet.hold("r1", 90_175)
    wallet.settle("r1", 1000, None)
    wallet.charge_commission("r1", 18)
    assert wallet.balance_cents == 200_982
    assert wallet.last_round == {"round_id": "r1", "net_cents": 982, "commission_cents": 18}


def test_points_may_go_below_zero() -> None:
    wallet = funded()
    wallet.change_points(-10, "dealer", "r1", "dealt")
    assert wallet.points == -10


def test_replaying_the_events_rebuilds_the_same_wallet() -> None:
    wallet = funded(5000)
    wallet.hold("r1", 1000)
    wallet.settle("r1", 950, CASINO_BANK)
    wallet.hold("r2", 100)
    wallet.withdraw("t2", 300)
    wallet.change_points(7, "player", "r1", "staked")
    copy = replayed(wallet)
    assert vars(copy) == vars(wallet)
