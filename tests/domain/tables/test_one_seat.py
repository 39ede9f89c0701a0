"""The one-seat coups, given / when / then, without a store: the house's single-player
round (a one-seat table the house banks) and a P2P round (the dealer banks), each
command's events. Rounds stored before they were coups: tests/domain/tables/test_old_rounds.py."""

import pytest

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
from domain.tables.coup import Coup
from domain.tables.games import rules_of
from domain.unit import MemoryBox
from tests.domain.events import given, kinds, then

SEED = "00" * 32
# The seed's worked example (rules.md 2.1): Player 10,3 then 10 (3); Banker K,10 then Q (0).
# A bare rank takes the first card of that rank left in the unshuffled shoe (10S, 10H, ...).
EXAMPLE = ["10", "K", "3", "10", "10", "Q"]
DEADLINE = "2026-01-01T00:00:30+00:00"  # no one-seat coup ever owes a choice


def opened(variant: str = "p2p", shoe: list[str] | None = None) -> Coup:
    dealer = "dan" if variant == "p2p" else None
    return Coup.open(
        variant=variant,
        mode="real",
        player_id="pat",
        limits=(200, 10_000),
        decks=6,
        tie_pays=9,
        box=MemoryBox(),
        seed=SEED,
        shoe_prefix=shoe if shoe is not None else EXAMPLE,
        banker_id=dealer,
        bank_cents=0,
        table_id="t1" if dealer else None,
        commission_basis_points=175 if dealer else 0,
    )


def bet(round_: Coup, spot: str, cents: int) -> None:
    round_.place_bet(rules_of(round_.variant), "pat", spot, cents)


def deal(round_: Coup) -> None:
    round_.deal(rules_of(round_.variant), ["pat"], set(), DEADLINE)


def with_bets(*bets: tuple[str, int], variant: str = "p2p") -> Coup:
    return given(opened(variant), *(lambda r, b=b: bet(r, *b) for b in bets))


def test_opening_commits_the_round_to_its_shoe_before_any_bet() -> None:
    round_ = opened()
    [(kind, opening)] = then(round_)
    assert kind == "Created"
    assert opening["seed_commitment"] == commitment(SEED)
    assert opening["shuffle_algorithm"] == "fy-sha256-v1"
    assert (opening["player_id"], opening["banker_id"], opening["table_id"]) == ("pat", "dan", "t1")
    # The seed and the chosen shoe are stored sealed; the round keeps them in memory.
    assert (opening["seed"], opening["shoe_prefix"]) == (None, None)
    assert opening["sealed_secrets"] and SEED not in opening["sealed_secrets"]
    assert (round_.seed, round_.shoe_prefix) == (SEED, EXAMPLE)
    assert (round_.status, round_.bets, round_.one_seat) == ("open", {}, True)


def test_a_bet_is_recorded_for_the_rounds_player_with_its_chips() -> None:
    round_ = with_bets()
    bet(round_, "banker", 3_100)
    assert then(round_) == [
        (
            "BetPlaced",
            {"player_id": "pat", "spot": "banker", "amount_cents": 3_100, "chips": [25, 5, 1]},
        )
    ]


@pytest.mark.parametrize(
    ("spot", "cents", "refusal"),
    [
        ("dragon", 100, UnknownSpot),
        ("tie", 150, InvalidStake),
        ("player", 9_500, AboveTableMaximum),  # the round's total stake: 10 + 95 > 100
    ],
)
def test_a_bet_the_rules_refuse_emits_nothing(spot: str, cents: int, refusal: type) -> None:
    round_ = with_bets(("banker", 1000))
    with pytest.raises(refusal):
        bet(round_, spot, cents)
    assert then(round_) == []


def test_a_stake_below_the_minimum_is_taken_and_judged_at_the_deal() -> None:
    round_ = with_bets()
    bet(round_, "tie", 100)  # $1 of a $2 minimum: more chips may follow
    assert kinds(round_) == ["BetPlaced"]
    with pytest.raises(BelowTableMinimum):
        deal(round_)
    assert then(round_) == []


def test_a_spots_stake_can_be_taken_back_before_the_deal() -> None:
    round_ = with_bets(("banker", 1000), ("banker", 500))
    assert round_.remove_bet(rules_of("p2p"), "pat", "banker") == 1500
    assert then(round_) == [
        ("BetRemoved", {"player_id": "pat", "spot": "banker", "amount_cents": 1500})
    ]
    with pytest.raises(NoStakeOnSpot):
        round_.remove_bet(rules_of("p2p"), "pat", "banker")


def test_the_deal_records_every_card_payout_and_commission_of_the_seeds_example() -> None:
    round_ = with_bets(("banker", 1000))
    deal(round_)
    assert then(round_) == [
        ("CardDealt", {"hand": "player", "card": "10S", "position": 0}),
        ("CardDealt", {"hand": "banker", "card": "KS", "position": 1}),
        ("CardDealt", {"hand": "player", "card": "3S", "position": 2}),
        ("CardDealt", {"hand": "banker", "card": "10H", "position": 3}),
        ("ThirdCardDrawn", {"hand": "player", "card": "10D", "position": 4}),
        ("ThirdCardDrawn", {"hand": "banker", "card": "QS", "position": 5}),
        (
            "PayoutMade",
            {"player_id": "pat", "spot": "banker", "stake_cents": 1000, "net_cents": -1000},
        ),
        ("CommissionCharged", {"commission_cents": 18}),  # 1.75% of every stake
        (
            "Settled",
            {
                "outcome": "player",
                "totals": {"player": 3, "banker": 0},
                "seed": SEED,
                "bank_after_cents": 0,
                "shoe_prefix": EXAMPLE,
            },
        ),
    ]
    assert round_.nets() == {"pat": -1000, "dan": 982}
    assert round_.casino_net_cents() == 18


def test_a_p2p_commission_is_on_the_stakes_whoever_wins() -> None:
    round_ = with_bets(("player", 1000), ("tie", 200))  # the player's 10 wins, the tie loses
    deal(round_)
    assert ("CommissionCharged", {"commission_cents": 21}) in then(round_)  # 1.75% of 12.00
    assert round_.nets() == {"pat": 800, "dan": -821}


def test_a_house_round_charges_no_commission_and_the_house_takes_the_other_side() -> None:
    round_ = with_bets(("player", 500), variant="house")
    deal(round_)
    assert "CommissionCharged" not in kinds(round_)
    assert round_.nets() == {"pat": 500}
    assert round_.casino_net_cents() == -500


def test_the_deal_needs_a_bet() -> None:
    empty = with_bets()
    with pytest.raises(NoBets):
        deal(empty)
    assert then(empty) == []


def test_voiding_reveals_the_seed_and_nothing_changes_after() -> None:
    round_ = with_bets(("banker", 1000))
    round_.void("the player left")
    assert then(round_) == [
        ("Voided", {"reason": "the player left", "seed": SEED, "shoe_prefix": EXAMPLE})
    ]
    for command in (lambda: bet(round_, "tie", 100), lambda: deal(round_),
                    lambda: round_.void("x")):  # fmt: skip
        with pytest.raises(RoundNotOpen):
            command()
    assert then(round_) == []
