"""The baccarat round aggregate, given / when / then, without a store: each command's events."""

import pytest

from domain.baccarat.round import BaccaratRound
from domain.errors import (
    AboveTableMaximum,
    BelowTableMinimum,
    InvalidStake,
    NoBets,
    NoStakeOnSpot,
    RoundNotOpen,
    UnknownSpot,
)
from domain.shoe import commitment
from domain.unit import MemoryBox
from tests.domain.events import given, kinds, then

SEED = "00" * 32
# The seed's worked example (rules.md 2.1): Player 10,3 then 10 (3); Banker K,10 then Q (0).
# A bare rank takes the first card of that rank left in the unshuffled shoe (10S, 10H, ...).
EXAMPLE = ["10", "K", "3", "10", "10", "Q"]


def opened(variant: str = "p2p", shoe: list[str] | None = None) -> BaccaratRound:
    dealer = "dan" if variant == "p2p" else None
    return BaccaratRound.open(
        variant=variant,
        mode="real",
        player_id="pat",
        limits=(200, 10_000),
        decks=6,
        tie_pays=9,
        box=MemoryBox(),
        seed=SEED,
        shoe_prefix=shoe if shoe is not None else EXAMPLE,
        dealer_id=dealer,
        table_id="t1" if dealer else None,
        commission_basis_points=175 if dealer else 0,
    )


def with_bets(*bets: tuple[str, int], variant: str = "p2p") -> BaccaratRound:
    return given(opened(variant), *(lambda r, b=bet: r.place_bet(*b) for bet in bets))


def test_opening_commits_the_round_to_its_shoe_before_any_bet() -> None:
    round_ = opened()
    [(kind, opening)] = then(round_)
    assert kind == "Created"
    assert opening["seed_commitment"] == commitment(SEED)
    assert opening["shuffle_algorithm"] == "fy-sha256-v1"
    # The seed and the chosen shoe are stored sealed; the round keeps them in memory.
    assert (opening["seed"], opening["shoe_prefix"]) == (None, None)
    assert opening["sealed_secrets"] and SEED not in opening["sealed_secrets"]
    assert (round_.seed, round_.shoe_prefix) == (SEED, EXAMPLE)
    assert (round_.status, round_.bets) == ("open", {})


def test_a_bet_is_recorded_with_its_chips() -> None:
    round_ = with_bets()
    round_.place_bet("banker", 3_100)
    assert then(round_) == [
        ("BetPlaced", {"spot": "banker", "amount_cents": 3_100, "chips": [25, 5, 1]})
    ]


@pytest.mark.parametrize(
    ("spot", "cents", "refusal"),
    [
        ("dragon", 100, UnknownSpot),
        ("tie", 150, InvalidStake),
        ("player", 9_500, AboveTableMaximum),
    ],
)
def test_a_bet_the_rules_refuse_emits_nothing(spot: str, cents: int, refusal: type) -> None:
    round_ = with_bets(("banker", 1000))
    with pytest.raises(refusal):
        round_.place_bet(spot, cents)
    assert then(round_) == []


def test_a_spots_stake_can_be_taken_back_before_the_deal() -> None:
    round_ = with_bets(("banker", 1000), ("banker", 500))
    assert round_.remove_bet("banker") == 1500
    assert then(round_) == [("BetRemoved", {"spot": "banker", "amount_cents": 1500})]
    with pytest.raises(NoStakeOnSpot):
        round_.remove_bet("banker")


def test_the_deal_records_every_card_payout_and_commission_of_the_seeds_example() -> None:
    round_ = with_bets(("banker", 1000))
    round_.deal()
    assert then(round_) == [
        ("CardDealt", {"hand": "player", "card": "10S", "position": 0}),
        ("CardDealt", {"hand": "banker", "card": "KS", "position": 1}),
        ("CardDealt", {"hand": "player", "card": "3S", "position": 2}),
        ("CardDealt", {"hand": "banker", "card": "10H", "position": 3}),
        ("ThirdCardDrawn", {"hand": "player", "card": "10D", "position": 4}),
        ("ThirdCardDrawn", {"hand": "banker", "card": "QS", "position": 5}),
        ("PayoutMade", {"spot": "banker", "stake_cents": 1000, "net_cents": -1000}),
        ("CommissionCharged", {"commission_cents": 18}),
        (
            "Settled",
            {
                "outcome": "player",
                "player_total": 3,
                "banker_total": 0,
                "seed": SEED,
                "shoe_prefix": EXAMPLE,
            },
        ),
    ]
    assert round_.nets() == {"player": -1000, "dealer": 982, "casino": 18}


def test_a_house_round_charges_no_commission_and_the_house_takes_the_other_side() -> None:
    round_ = with_bets(("player", 500), variant="house")
    round_.deal()
    assert "CommissionCharged" not in kinds(round_)
    assert round_.nets() == {"player": 500, "casino": -500}


def test_the_deal_needs_bets_reaching_the_table_minimum() -> None:
    empty = with_bets()
    with pytest.raises(NoBets):
        empty.deal()
    small = with_bets(("tie", 100))
    with pytest.raises(BelowTableMinimum):
        small.deal()
    assert then(empty) + then(small) == []


def test_voiding_reveals_the_seed_and_nothing_changes_after() -> None:
    round_ = with_bets(("banker", 1000))
    round_.void("the player left")
    assert then(round_) == [
        ("Voided", {"reason": "the player left", "seed": SEED, "shoe_prefix": EXAMPLE})
    ]
    for command in (lambda: round_.place_bet("tie", 100), round_.deal, lambda: round_.void("x")):
        with pytest.raises(RoundNotOpen):
            command()
    assert then(round_) == []
