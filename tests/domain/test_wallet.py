"""The wallet aggregate, given / when / then, without a store: each command's events."""

import pytest

from domain.errors import (
    BalanceLimitExceeded,
    InsufficientFunds,
    InvalidAmount,
    InvalidPointsChange,
    UnknownHold,
)
from domain.wallet import BALANCE_CENTS_MAX, CASINO_BANK, WIN_PER_CENT_HELD_MAX, Wallet
from tests.domain.events import given, then


def funded(cents: int = 10_000) -> Wallet:
    return given(Wallet("alice", "real"), lambda wallet: wallet.deposit("t1", cents))


def replayed(wallet: Wallet) -> Wallet:
    """The wallet rebuilt from its own events, as the store would."""
    copy = None
    for event in wallet.collect_events():
        copy = event.mutate(copy)
    assert isinstance(copy, Wallet)
    return copy


def test_a_deposit_raises_the_balance_and_posts_against_the_cashier() -> None:
    wallet = given(Wallet("alice", "real"))
    wallet.deposit("t1", 1050)
    assert then(wallet) == [
        (
            "Deposited",
            {
                "transaction_id": "t1",
                "amount_cents": 1050,
                "postings": [["player:alice", 1050], ["cashier", -1050]],
                "balance_after_cents": 1050,
            },
        )
    ]
    assert (wallet.balance_cents, wallet.held_cents, wallet.available_cents) == (1050, 0, 1050)


def test_a_withdrawal_posts_to_the_cashier() -> None:
    wallet = funded(1000)
    wallet.withdraw("t2", 400)
    assert then(wallet) == [
        (
            "Withdrawn",
            {
                "transaction_id": "t2",
                "amount_cents": 400,
                "postings": [["player:alice", -400], ["cashier", 400]],
                "balance_after_cents": 600,
            },
        )
    ]


def test_a_withdrawal_above_available_is_refused_and_emits_nothing() -> None:
    wallet = given(funded(1000), lambda wallet: wallet.hold("r1", 600))
    with pytest.raises(InsufficientFunds) as refused:
        wallet.withdraw("t2", 401)
    assert refused.value.facts == {"available": "4.00", "shortfall": "0.01"}
    assert then(wallet) == []
    assert (wallet.balance_cents, wallet.available_cents) == (1000, 400)


def test_a_hold_reserves_money_without_moving_it() -> None:
    wallet = funded(1000)
    wallet.hold("r1", 300)
    wallet.hold("r1", 200)
    assert then(wallet) == [
        ("FundsHeld", {"round_id": "r1", "amount_cents": 300}),
        ("FundsHeld", {"round_id": "r1", "amount_cents": 200}),
    ]
    assert (wallet.balance_cents, wallet.held_cents, wallet.available_cents) == (1000, 500, 500)


def test_a_hold_above_available_is_refused() -> None:
    wallet = funded(1000)
    with pytest.raises(InsufficientFunds):
        wallet.hold("r1", 1001)
    assert then(wallet) == []


def test_releasing_part_of_a_hold_keeps_the_rest() -> None:
    wallet = given(funded(1000), lambda wallet: wallet.hold("r1", 500))
    wallet.release("r1", 200)
    assert wallet.holds == {"r1": 300}
    wallet.release("r1")
    assert then(wallet) == [
        ("HoldReleased", {"round_id": "r1", "amount_cents": 200}),
        ("HoldReleased", {"round_id": "r1", "amount_cents": 300}),
    ]
    assert wallet.holds == {}


@pytest.mark.parametrize("amount", [0, -1, 501])
def test_releasing_nothing_or_more_than_held_is_refused(amount: int) -> None:
    wallet = given(funded(1000), lambda wallet: wallet.hold("r1", 500))
    with pytest.raises(InvalidAmount):
        wallet.release("r1", amount)
    assert then(wallet) == []


def test_releasing_a_hold_that_does_not_exist_is_refused() -> None:
    with pytest.raises(UnknownHold):
        funded().release("nope")


def test_settling_a_lost_round_releases_the_hold_and_pays_the_bank() -> None:
    wallet = given(funded(1000), lambda wallet: wallet.hold("r1", 400))
    wallet.settle("r1", -400, CASINO_BANK)
    assert then(wallet) == [
        (
            "RoundSettled",
            {
                "round_id": "r1",
                "net_cents": -400,
                "released_cents": 400,
                "postings": [["player:alice", -400], [CASINO_BANK, 400]],
                "balance_after_cents": 600,
            },
        )
    ]
    assert (wallet.balance_cents, wallet.held_cents) == (600, 0)
    assert wallet.last_round == {"round_id": "r1", "net_cents": -400, "commission_cents": 0}


def test_a_dealer_commission_is_taken_from_the_round_result() -> None:
    wallet = given(
        funded(200_000),
        lambda wallet: wallet.hold("r1", 90_175),
        lambda wallet: wallet.settle("r1", 1000, None),
    )
    wallet.charge_commission("r1", 18)
    assert then(wallet) == [
        (
            "CommissionCharged",
            {
                "round_id": "r1",
                "commission_cents": 18,
                "postings": [["player:alice", -18], ["casino:commission", 18]],
                "balance_after_cents": 200_982,
            },
        )
    ]
    assert wallet.last_round == {"round_id": "r1", "net_cents": 982, "commission_cents": 18}


def test_points_may_go_below_zero() -> None:
    wallet = funded()
    wallet.change_points(-10, "dealer", "r1", "dealt")
    assert then(wallet) == [
        (
            "PointsChanged",
            {
                "change": -10,
                "role": "dealer",
                "round_id": "r1",
                "reason": "dealt",
                "points_after": -10,
            },
        )
    ]


def test_an_operator_adjustment_needs_a_reason_and_a_change() -> None:
    wallet = funded()
    wallet.adjust_points(50, "  welcome  ")
    assert then(wallet)[0][1] | {"points_after": 50} == {
        "change": 50,
        "role": "operator",
        "round_id": None,
        "reason": "welcome",
        "points_after": 50,
    }
    for change, reason in ((0, "why"), (10**10, "why"), (5, "  ")):
        with pytest.raises(InvalidPointsChange):
            wallet.adjust_points(change, reason)
    assert then(wallet) == []


def test_replaying_the_events_rebuilds_the_same_wallet() -> None:
    wallet = Wallet("alice", "real")
    wallet.deposit("t1", 5000)
    wallet.hold("r1", 1000)
    wallet.settle("r1", 950, CASINO_BANK)
    wallet.hold("r2", 100)
    wallet.withdraw("t2", 300)
    wallet.change_points(7, "player", "r1", "staked")
    assert vars(replayed(wallet)) == vars(wallet)


def test_a_deposit_that_would_pass_the_balance_ceiling_is_refused_and_emits_nothing() -> None:
    wallet = given(Wallet("alice", "real"), lambda w: w.deposit("t1", BALANCE_CENTS_MAX - 100))
    with pytest.raises(BalanceLimitExceeded) as refused:
        wallet.deposit("t2", 101)
    assert refused.value.facts == {"limit": "1000000000000.00", "allowed": "1.00"}
    assert then(wallet) == []


def test_a_hold_whose_largest_payout_would_pass_the_ceiling_is_refused() -> None:
    # A held cent can win at most WIN_PER_CENT_HELD_MAX cents: the worst case must fit.
    room_cents = 1_000 * WIN_PER_CENT_HELD_MAX
    wallet = given(
        Wallet("alice", "real"), lambda w: w.deposit("t1", BALANCE_CENTS_MAX - room_cents)
    )
    wallet.hold("r1", 1_000)
    assert [name for name, _ in then(wallet)] == ["FundsHeld"]
    with pytest.raises(BalanceLimitExceeded) as refused:
        wallet.hold("r2", 1)
    assert refused.value.facts["allowed"] == "0.00"
    with pytest.raises(BalanceLimitExceeded):
        wallet.deposit("t2", 1)
