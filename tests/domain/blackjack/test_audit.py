"""Re-checking a blackjack round from its events: honest rounds pass, altered ones are named."""

from types import SimpleNamespace
from typing import Any

from domain.blackjack.audit import play_again, verify_blackjack_round
from domain.blackjack.round import BlackjackRound
from domain.rounds import WalletEntry
from domain.wallet import ROUND_SETTLED
from tests.domain.blackjack.test_round import given


def events_of(round_: BlackjackRound) -> list[Any]:
    return list(round_.pending_events)


def settled_entry(net_cents: int) -> WalletEntry:
    """The player's wallet settling the round: only its net matters here."""
    return WalletEntry("alice", ROUND_SETTLED, SimpleNamespace(net_cents=net_cents))


def split_and_doubled() -> BlackjackRound:
    round_ = given({1: ["8", "8"], 2: ["6", "5"]}, dealer=["9", "7"], then=["3", "K", "9", "10"])
    for box, hand, action in [(1, 0, "split"), (1, 0, "stand"), (1, 1, "stand"), (2, 0, "double")]:
        round_.act(round_.decide(box, hand, action))
    return round_


def altered(event: Any, **changes: Any) -> None:
    """What someone editing the stored event could do."""
    for name, value in changes.items():
        object.__setattr__(event, name, value)


def test_an_honest_round_verifies_clean() -> None:
    round_ = split_and_doubled()
    events = events_of(round_)
    assert play_again(round_, events) == round_.state
    assert verify_blackjack_round(events, [settled_entry(round_.player_net_cents)]) == []


def test_a_round_in_play_has_nothing_to_check_yet() -> None:
    round_ = given({1: ["10", "6"]}, dealer=["9", "7"])
    assert verify_blackjack_round(events_of(round_), []) == []


def test_a_card_that_is_not_the_shoes_is_named() -> None:
    round_ = split_and_doubled()
    events = events_of(round_)
    drew = next(e for e in events if type(e).__name__ == "DealerDrew")
    altered(drew, card="AS")
    problems = verify_blackjack_round(events, [settled_entry(round_.player_net_cents)])
    assert any("DealerDrew at shoe position" in problem for problem in problems)


def test_a_payout_the_shoe_does_not_give_is_named() -> None:
    round_ = split_and_doubled()
    events = events_of(round_)
    payout = next(e for e in events if type(e).__name__ == "PayoutMade")
    altered(payout, hands=[{**hand, "net_cents": 2 * hand["net_cents"]} for hand in payout.hands])
    problems = verify_blackjack_round(events, [settled_entry(round_.player_net_cents)])
    assert any("box 1 paid" in problem for problem in problems)


def test_a_wallet_that_posted_another_result_is_named() -> None:
    round_ = split_and_doubled()
    problems = verify_blackjack_round(events_of(round_), [settled_entry(1)])
    assert problems == [
        f"round {round_.round_id}: the wallet posted [1], the round says {round_.player_net_cents}"
    ]
