"""Bonus money in the wallet (rules.md 9), given / when / then, without a store."""

from __future__ import annotations

import datetime
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import pytest

from domain.baccarat.odds import chance_any_wins
from domain.blackjack import odds as blackjack_odds
from domain.bonus import (
    CASINO_BONUS,
    Grant,
    Split,
    baccarat_wagered,
    bonus_bet_problems,
    conversion,
    is_surebet,
    split_return,
)
from domain.errors import (
    BonusEnded,
    BonusMaxBet,
    BonusNotAllowed,
    BonusSurebet,
    InsufficientFunds,
    InvalidBonus,
    WageringAboveCap,
)
from domain.wallet import BONUS_HELD, BONUS_RELEASED, CASINO_BANK, Wallet
from tests.domain.events import given, kinds, then

NOW = datetime.datetime(2026, 12, 7, 12, tzinfo=datetime.UTC)
CAP = 10


def granted(cash: int = 0, amount: int = 10_000, wagering: int = 10, **options: Any) -> Wallet:
    """Alice's real wallet with `cash` deposited and one bonus granted."""
    wallet = Wallet("alice", "real")
    if cash:
        wallet.deposit("t1", cash)
    wallet.grant_bonus("b1", Grant(amount, wagering, 30, **options), CAP, NOW)
    return given(wallet)


def postings_sum(wallet: Wallet) -> int:
    return sum(cents for event in wallet.collect_events()
               for _, cents in getattr(event, "postings", ()))  # fmt: skip


def test_a_grant_moves_money_from_casino_bonus_to_the_players_bonus() -> None:
    wallet = given(Wallet("alice", "real"))
    wallet.grant_bonus("b1", Grant(10_000, 10, 30), CAP, NOW)
    [(kind, fields)] = then(wallet)
    assert kind == "BonusGranted"
    assert fields["postings"] == [["bonus:alice", 10_000], [CASINO_BONUS, -10_000]]
    assert fields["wagering_required_cents"] == 100_000
    assert fields["expires_at"] == "2027-01-06T12:00:00+00:00"
    assert (wallet.balance_cents, wallet.bonus_cents, wallet.bonus_available_cents) == (
        0,
        10_000,
        10_000,
    )


@pytest.mark.parametrize(
    ("grant", "refusal"),
    [
        (Grant(10_000, 11, 30), WageringAboveCap),
        (Grant(10_000, 0, 30), InvalidBonus),
        (Grant(0, 10, 30), InvalidBonus),
        (Grant(10_000, 10, 91), InvalidBonus),
        (Grant(10_000, 10, 0), InvalidBonus),
        (Grant(10_000, 10, 30, max_bet_cents=0), InvalidBonus),
    ],
)
def test_a_bad_grant_is_refused_and_changes_nothing(grant: Grant, refusal: type) -> None:
    wallet = given(Wallet("alice", "real"))
    with pytest.raises(refusal):
        wallet.grant_bonus("b1", grant, CAP, NOW)
    assert then(wallet) == [] and wallet.bonuses == {}


def test_play_money_has_no_bonus() -> None:
    with pytest.raises(InvalidBonus):
        given(Wallet("alice", "play")).grant_bonus("b1", Grant(100, 1, 1), CAP, NOW)


def test_later_grants_wait_in_line_and_start_first_in_first_out() -> None:
    wallet = granted()
    wallet.grant_bonus("b2", Grant(2_000, 1, 30), CAP, NOW)
    wallet.grant_bonus("b3", Grant(3_000, 1, 30), CAP, NOW)
    assert [b["status"] for b in wallet.bonuses_in_order()] == ["active", "waiting", "waiting"]
    wallet.forfeit_bonus("b1", "player")
    assert wallet.active_bonus_id == "b2" and wallet.bonus_waiting == ["b3"]
    wallet.forfeit_bonus("b3", "player")  # a waiting bonus can be forfeited too
    assert wallet.active_bonus_id == "b2" and wallet.bonus_waiting == []
    assert wallet.bonus_cents == 2_000
    with pytest.raises(BonusEnded):
        wallet.forfeit_bonus("b1", "again")


def test_a_stake_takes_cash_first_then_bonus() -> None:
    wallet = granted(cash=3_000)
    wallet.hold("r1", 5_000, house=True)
    assert then(wallet) == [
        ("FundsHeld", {"round_id": "r1", "amount_cents": 3_000}),
        (
            "BonusHeld",
            {
                "round_id": "r1",
                "bonus_id": "b1",
                "amount_cents": 2_000,
                "stake_cents": 5_000,
                "balance_before_cents": 10_000,
                "max_bet_cents": None,
                "spot_cents": 5_000,
            },
        ),
    ]
    assert (wallet.available_cents, wallet.bonus_available_cents) == (0, 8_000)
    assert wallet.round_held_cents("r1") == 5_000


def test_a_player_banked_game_takes_cash_only() -> None:
    wallet = granted(cash=3_000)
    with pytest.raises(BonusNotAllowed) as refused:
        wallet.hold("r1", 5_000)
    assert refused.value.facts == {"available": "30.00"}
    with pytest.raises(InsufficientFunds):
        wallet.hold("r1", 14_000)  # cash and bonus would not have covered it either
    assert then(wallet) == []


def test_a_return_goes_back_in_the_proportion_staked_bonus_rounded_down() -> None:
    wallet = granted(cash=3_000)
    wallet.hold("r1", 3_333, house=True)  # 3,000 cash, 333 bonus
    wallet.settle("r1", 3_333, CASINO_BANK, wagered_cents=3_333)  # won even money: 6,666
    settled = dict(then(wallet))
    # 6,666 x 333 / 3,333 = 666.0: bonus 666, cash 6,000.
    assert settled["RoundSettled"]["net_cents"] == 3_000
    assert settled["BonusSettled"]["net_cents"] == 333
    assert settled["BonusSettled"]["wagered_cents"] == 3_333
    assert (wallet.balance_cents, wallet.bonus_cents) == (6_000, 10_333)
    assert split_return(1_001, Split(2, 1)) == Split(668, 333)


def test_withdrawing_all_cash_never_touches_the_bonus() -> None:
    wallet = granted(cash=3_000)
    wallet.withdraw("t2", 3_000)
    assert wallet.bonus_cents == 10_000 and wallet.balance_cents == 0


def test_a_round_begun_under_an_ended_bonus_takes_cash_only_under_the_next() -> None:
    wallet = granted(cash=1_000)
    wallet.hold("r1", 3_000, house=True)  # 1,000 cash, 2,000 of b1
    wallet.grant_bonus("b2", Grant(5_000, 1, 30), CAP, NOW)
    wallet.forfeit_bonus("b1", "player")  # b2 starts; r1 still holds b1's 2,000
    with pytest.raises(InsufficientFunds):
        wallet.hold("r1", 100, house=True)  # no cash left, and b2 is not r1's bonus
    wallet.settle("r1", 3_000, CASINO_BANK, wagered_cents=3_000)  # won: 6,000 back
    assert (wallet.balance_cents, wallet.bonus_cents) == (2_000, 5_000)  # b1's 4,000 gone
    assert wallet.bonuses["b2"]["wagered_cents"] == 0


def test_a_removed_bet_gives_back_the_bonus_first() -> None:
    wallet = given(granted(cash=3_000), lambda w: w.hold("r1", 5_000, house=True))
    wallet.release("r1", 2_500)
    assert kinds(wallet) == ["BonusReleased", "HoldReleased"]
    assert (wallet.available_cents, wallet.bonus_available_cents) == (500, 10_000)
    wallet.release("r1")
    assert wallet.bonus_rounds == {} and wallet.holds == {}


def test_a_bet_above_the_maximum_stake_is_refused() -> None:
    wallet = granted(cash=3_000, max_bet_cents=500)
    with pytest.raises(BonusMaxBet) as refused:
        wallet.hold("r1", 501, house=True)
    assert refused.value.facts == {"max_bet": "5.00"}
    assert then(wallet) == []


def test_the_maximum_stake_bounds_the_whole_stake_on_the_spot() -> None:
    wallet = given(granted(max_bet_cents=500), lambda w: w.hold("r1", 500, house=True))
    with pytest.raises(BonusMaxBet):
        wallet.hold("r1", 500, house=True, spot_cents=1_000)  # Player 5.00 again
    assert then(wallet) == []
    wallet.hold("r1", 500, house=True, spot_cents=500)  # Banker 5.00: its own spot
    assert dict(then(wallet))["BonusHeld"]["spot_cents"] == 500


def test_a_surebet_may_stake_at_most_half_the_bonus() -> None:
    wallet = given(granted(), lambda w: w.hold("r1", 5_000, house=True))  # Player 50, bonus
    with pytest.raises(BonusSurebet) as refused:
        wallet.hold("r1", 1, house=True, surebet=True)  # Banker 0.01: a surebet
    assert refused.value.facts == {"limit": "50.00", "bonus_staked": "50.01"}
    assert then(wallet) == []
    wallet.hold("r1", 1, house=True, surebet=False)  # not a surebet: allowed


def test_the_surebet_chances() -> None:
    assert round(float(chance_any_wins(["player", "banker"], 8)), 4) == 0.9048
    assert is_surebet(chance_any_wins(["player", "banker"], 8))
    assert chance_any_wins(["player", "banker", "tie"], 6) == 1
    assert not is_surebet(chance_any_wins(["banker", "tie"], 8))
    assert not is_surebet(blackjack_odds.chance_any_wins(5, insured=True))
    assert blackjack_odds.chance_any_wins(0, insured=False) == Fraction(0)


@pytest.mark.parametrize(
    ("spots", "outcome", "counted"),
    [
        ({"player": 5_000, "banker": 4_000}, "banker", 1_000),
        ({"player": 5_000, "banker": 4_000}, "tie", 0),
        ({"player": 5_000, "tie": 500}, "tie", 500),
        ({"banker": 2_000, "tie": 100}, "player", 2_100),
        ({"banker": 2_000}, None, 0),
    ],
)
def test_what_a_baccarat_round_counts(spots: dict[str, int], outcome: str, counted: int) -> None:
    assert baccarat_wagered(spots, outcome) == counted


def test_a_met_requirement_converts_up_to_the_maximum_conversion() -> None:
    wallet = granted(amount=1_000, wagering=1, max_conversion_cents=600)
    given(wallet, lambda w: w.hold("r1", 1_000, house=True))
    wallet.settle("r1", 1_000, CASINO_BANK, wagered_cents=1_000)  # won: bonus 2,000
    assert kinds(wallet) == ["RoundSettled", "BonusSettled", "BonusConverted"]
    assert wallet.bonuses["b1"]["status"] == "converted"
    assert (wallet.balance_cents, wallet.bonus_cents) == (600, 0)


def test_money_held_when_a_bonus_converts_converts_as_its_round_settles() -> None:
    wallet = granted(amount=1_000, wagering=1)
    wallet.hold("r2", 400, house=True)
    wallet.hold("r1", 600, house=True)
    wallet.settle("r1", 600, CASINO_BANK, wagered_cents=600)  # bonus 1,600, 400 held
    wallet.settle("r2", 0, CASINO_BANK, wagered_cents=0)  # not counted: returned
    assert wallet.active_bonus is not None
    wallet.hold("r3", 400, house=True)
    wallet.grant_bonus("b2", Grant(500, 1, 30), CAP, NOW)
    wallet.settle("r3", -400, CASINO_BANK, wagered_cents=400)  # met: 1,200 converts
    assert wallet.balance_cents == 1_200 and wallet.active_bonus_id == "b2"
    assert postings_sum(wallet) == 0


def test_held_bonus_money_of_a_forfeited_bonus_goes_back_as_its_round_settles() -> None:
    wallet = granted()
    wallet.hold("r1", 2_000, house=True)
    wallet.forfeit_bonus("b1", "player")
    assert wallet.bonus_cents == 2_000 and wallet.active_bonus is None
    wallet.settle("r1", 2_000, CASINO_BANK, wagered_cents=2_000)
    settled = dict(then(wallet))["BonusSettled"]
    assert settled["wagered_cents"] == 0
    assert settled["postings"] == [
        ["bonus:alice", 2_000], [CASINO_BANK, -2_000], ["bonus:alice", -4_000],
        [CASINO_BONUS, 4_000]
    ]  # fmt: skip
    assert wallet.bonus_cents == 0 and wallet.balance_cents == 0


def test_held_money_of_a_forfeited_bonus_goes_back_when_its_bet_is_taken_back() -> None:
    wallet = given(
        granted(cash=500),
        lambda w: w.hold("r1", 2_500, house=True),  # 500 cash, 2,000 bonus
        lambda w: w.forfeit_bonus("b1", "player"),
    )
    wallet.release("r1", 1_500)  # a bet taken back: bonus first
    assert then(wallet) == [
        (
            "EndedBonusReleased",
            {
                "round_id": "r1",
                "bonus_id": "b1",
                "amount_cents": 1_500,
                "whole": False,
                "to_cash_cents": 0,
                "bonus_status": "forfeited",
                "postings": [["bonus:alice", -1_500], [CASINO_BONUS, 1_500]],
                "balance_after_cents": 500,
            },
        )
    ]
    wallet.release("r1")  # the round voided: the rest
    assert kinds(wallet) == ["EndedBonusReleased", "HoldReleased"]
    assert (wallet.bonus_cents, wallet.balance_cents, wallet.available_cents) == (0, 500, 500)
    assert wallet.bonuses["b1"]["balance_cents"] == 0 and wallet.bonus_rounds == {}


def test_held_money_of_a_converted_bonus_becomes_cash_when_its_bet_is_taken_back() -> None:
    wallet = granted(amount=1_000, wagering=1, max_conversion_cents=1_500)
    wallet.hold("r2", 800, house=True)
    wallet.hold("r1", 200, house=True)
    wallet.settle("r1", 1_000, CASINO_BANK, wagered_cents=200)  # won: 2,000, 800 held
    wallet.hold("r3", 1_000, house=True)
    wallet.settle("r3", 0, CASINO_BANK, wagered_cents=1_000)  # met: 1,200 converts
    given(wallet)
    wallet.release("r2")  # 300 of 800 within the maximum conversion, 500 back
    [(kind, fields)] = then(wallet)
    assert (kind, fields["to_cash_cents"]) == ("EndedBonusReleased", 300)
    assert fields["postings"] == [["bonus:alice", -800], ["player:alice", 300],
                                  [CASINO_BONUS, 500]]  # fmt: skip
    assert (wallet.bonus_cents, wallet.balance_cents) == (0, 1_500)
    assert wallet.bonuses["b1"]["converted_cents"] == 1_500


def test_a_bet_taken_back_under_the_active_bonus_gives_the_bonus_back_to_it() -> None:
    wallet = given(granted(), lambda w: w.hold("r1", 2_000, house=True))
    wallet.release("r1")
    assert kinds(wallet) == ["BonusReleased"]
    assert wallet.bonus_available_cents == 10_000


def test_only_stakes_held_while_the_bonus_was_active_count_towards_it() -> None:
    wallet = given(
        Wallet("alice", "real"),
        lambda w: w.deposit("t1", 10_000),
        lambda w: w.hold("r1", 10_000, house=True),  # Player 100.00, no bonus yet
        lambda w: w.deposit("t2", 1_000),
        lambda w: w.grant_bonus("b1", Grant(1_000, 10, 30), CAP, NOW),
    )
    wallet.hold("r1", 500, house=True)  # Banker 5.00 under the bonus
    wallet.release("r1", 500)  # taken back: counted no more
    wallet.hold("r1", 100, house=True)  # Player 1.00 more, under the bonus
    wallet.settle("r1", -10_100, CASINO_BANK, wagered_cents=10_100)
    assert dict(then(wallet))["BonusSettled"]["wagered_cents"] == 100
    assert wallet.bonuses["b1"]["wagered_cents"] == 100


def test_bets_all_taken_back_keep_the_rounds_balance_before_until_it_ends() -> None:
    wallet = given(granted(), lambda w: w.hold("r1", 4_000, house=True))
    wallet.release("r1", 4_000)  # every bet taken back
    assert then(wallet) == [
        (
            "BonusReleased",
            {"round_id": "r1", "bonus_id": "b1", "amount_cents": 4_000, "whole": False,
             "staked_cents": 0},
        )
    ]  # fmt: skip
    wallet.hold("r2", 5_000, house=True)
    wallet.settle("r2", 5_000, CASINO_BANK, wagered_cents=5_000)  # the bonus: 15,000
    with pytest.raises(BonusSurebet) as refused:  # half of 10,000, not of 15,000
        wallet.hold("r1", 6_000, house=True, surebet=True)
    assert refused.value.facts["limit"] == "50.00"
    wallet.hold("r1", 5_000, house=True, surebet=True)
    assert dict(then(wallet))["BonusHeld"]["balance_before_cents"] == 10_000
    wallet.release("r1")  # the round voided: its record goes
    assert "r1" not in wallet.bonus_rounds


def test_a_void_ends_a_rounds_record_kept_after_its_bets_were_taken_back() -> None:
    wallet = given(
        granted(), lambda w: w.hold("r1", 4_000, house=True), lambda w: w.release("r1", 4_000)
    )
    wallet.void_round("r1")
    assert kinds(wallet) == ["BonusReleased"] and wallet.bonus_rounds == {}
    wallet = given(
        granted(), lambda w: w.hold("r1", 4_000, house=True), lambda w: w.release("r1", 4_000)
    )
    wallet.forfeit_bonus("b1", "player")  # or its bonus ends
    assert wallet.bonus_rounds == {}


def test_a_bonus_expires_once_due_and_not_before() -> None:
    wallet = granted()
    assert not wallet.expire_bonus("b1", NOW)
    assert wallet.expire_bonus("b1", NOW + datetime.timedelta(days=30))
    assert kinds(wallet) == ["BonusExpired"]
    assert wallet.bonuses["b1"]["status"] == "expired" and wallet.bonus_cents == 0


def test_a_stake_or_a_settlement_first_ends_every_bonus_past_its_expiry() -> None:
    wallet = granted()  # b1 expires in 30 days
    wallet.grant_bonus("b2", Grant(500, 1, 31), CAP, NOW)
    wallet.grant_bonus("b3", Grant(700, 1, 60), CAP, NOW)
    given(wallet)
    assert wallet.end_expired_bonuses(NOW + datetime.timedelta(days=30, seconds=-1)) == []
    assert then(wallet) == []
    assert wallet.end_expired_bonuses(NOW + datetime.timedelta(days=31)) == ["b1", "b2"]
    assert kinds(wallet) == ["BonusExpired", "BonusExpired"]
    assert wallet.active_bonus_id == "b3" and wallet.bonus_cents == 700


def test_an_exclusion_forfeits_every_bonus() -> None:
    wallet = granted()
    wallet.grant_bonus("b2", Grant(500, 1, 30), CAP, NOW)
    assert wallet.forfeit_every_bonus("time_out") == ["b1", "b2"]
    assert wallet.bonus_cents == 0 and wallet.active_bonus is None


def test_the_audit_finds_a_bet_past_the_maximum_and_a_surebet_with_most_of_the_bonus() -> None:
    def held(
        amount: int, stake: int, max_bet: int | None = None, spot: int | None = None
    ) -> tuple[str, str, Any]:
        event = SimpleNamespace(
            amount_cents=amount,
            stake_cents=stake,
            balance_before_cents=10_000,
            max_bet_cents=max_bet,
            spot_cents=spot,
        )
        return ("alice", BONUS_HELD, event)  # fmt: skip

    fine = [held(3_000, 3_000, 5_000), held(2_000, 2_000, 5_000)]
    assert bonus_bet_problems("round r", fine, lambda _: True) == []
    too_big = [held(3_000, 6_000, 5_000)]
    assert bonus_bet_problems("round r", too_big, lambda _: False) == [
        "round r: alice staked 6000 cents on one spot, past the bonus's maximum stake of 5000"
    ]
    in_steps = [held(3_000, 3_000, 5_000, spot=3_000), held(2_500, 2_500, 5_000, spot=5_500)]
    assert bonus_bet_problems("round r", in_steps, lambda _: False) == [
        "round r: alice staked 5500 cents on one spot, past the bonus's maximum stake of 5000"
    ]
    hedged = [held(3_000, 3_000), held(2_001, 2_001)]
    assert bonus_bet_problems("round r", hedged, lambda _: False) == []
    assert bonus_bet_problems("round r", hedged, lambda _: True) == [
        "round r: alice staked 5001 cents of bonus money on a surebet, past half of 10000"
    ]
    released = ("alice", BONUS_RELEASED, SimpleNamespace(amount_cents=1))
    assert bonus_bet_problems("round r", [*hedged, released], lambda _: True) == []
    # Bets all taken back and placed again: the balance before the round's first bet.
    again = [held(4_000, 4_000), ("alice", BONUS_RELEASED, SimpleNamespace(amount_cents=4_000)),
             ("alice", BONUS_HELD, SimpleNamespace(amount_cents=5_001, stake_cents=5_001,
                                                   balance_before_cents=15_000,
                                                   max_bet_cents=None))]  # fmt: skip
    assert bonus_bet_problems("round r", again, lambda _: True) == [
        "round r: alice staked 5001 cents of bonus money on a surebet, past half of 10000"
    ]


def test_a_conversion_caps_what_becomes_cash() -> None:
    assert conversion(1_000, 600, 0) == Split(600, 400)
    assert conversion(1_000, 600, 500) == Split(100, 900)
    assert conversion(1_000, None, 0) == Split(1_000, 0)


def test_a_wallet_with_bonuses_replays_from_its_events() -> None:
    wallet = Wallet("alice", "real")
    wallet.deposit("t1", 1_000)
    wallet.grant_bonus("b1", Grant(1_000, 2, 30), CAP, NOW)
    wallet.hold("r1", 1_500, house=True)
    wallet.settle("r1", -1_500, CASINO_BANK, wagered_cents=1_500)
    copy = None
    for event in wallet.collect_events():
        copy = event.mutate(copy)
    assert isinstance(copy, Wallet)
    assert (copy.balance_cents, copy.bonus_cents, copy.bonuses) == (
        wallet.balance_cents,
        wallet.bonus_cents,
        wallet.bonuses,
    )


def test_a_snapshot_taken_before_bonuses_loads_with_none() -> None:
    state: dict[str, Any] = {}
    Wallet.upcast_v1_v2(state)
    Wallet.upcast_v2_v3(state)
    assert state["bonuses"] == {} and state["bonus_cents"] == 0


def test_a_third_party_bet_takes_cash_then_bonus_where_the_provider_allows_it() -> None:
    wallet = granted(cash=3_000, max_bet_cents=6_000)
    assert wallet.third_party_split(5_000, bonus_allowed=True) == Split(3_000, 2_000)
    assert wallet.third_party_split(2_000, bonus_allowed=False) == Split(2_000, 0)
    with pytest.raises(InsufficientFunds):
        wallet.third_party_split(5_000, bonus_allowed=False)
    with pytest.raises(BonusMaxBet):
        wallet.third_party_split(6_001, bonus_allowed=True)
    assert then(wallet) == []  # it only says how; the provider's call moves the money
