"""Blackjack Baden-Baden hand arithmetic and settlement (rules.md section 3)."""

from __future__ import annotations

import pytest

from domain.blackjack.hands import (
    BOXES_MAX,
    OUTCOME_BLACKJACK,
    OUTCOME_BUST,
    OUTCOME_CHARLIE,
    OUTCOME_LOSE,
    OUTCOME_PUSH,
    OUTCOME_WIN,
    HandValue,
    card_points,
    dealer_needs_card,
    hand_outcome,
    hand_value,
    insurance_stake_cents,
    is_blackjack,
    is_bust,
    is_six_card_charlie,
    same_rank,
    settle_even_money,
    settle_hand,
    settle_insurance,
    validate_box_number,
)
from domain.errors import InvalidBox


@pytest.mark.parametrize(
    ("card", "points"),
    [
        ("A", 1),
        ("AS", 1),
        ("2H", 2),
        ("9", 9),
        ("10", 10),
        ("10S", 10),
        ("JD", 10),
        ("Q", 10),
        ("KC", 10),
    ],
)
def test_cards_count_face_value_and_pictures_ten(card: str, points: int) -> None:
    assert card_points(card) == points


@pytest.mark.parametrize("card", ["", "1", "11", "QX", "S", "10SS", "q"])
def test_an_unknown_card_is_refused(card: str) -> None:
    with pytest.raises(ValueError, match="unknown card"):
        card_points(card)


@pytest.mark.parametrize(
    ("cards", "value"),
    [
        (["10", "7"], HandValue(17, is_soft=False)),
        (["A", "6"], HandValue(17, is_soft=True)),
        (["A", "8"], HandValue(19, is_soft=True)),
        (["A", "A"], HandValue(12, is_soft=True)),
        (["A", "A", "9"], HandValue(21, is_soft=True)),
        (["A", "6", "10"], HandValue(17, is_soft=False)),
        (["A", "A", "A", "A"], HandValue(14, is_soft=True)),
        (["KH", "QS", "2D"], HandValue(22, is_soft=False)),
        (["5", "6"], HandValue(11, is_soft=False)),
        ([], HandValue(0, is_soft=False)),
    ],
)
def test_an_ace_counts_eleven_when_that_does_not_bust(cards: list[str], value: HandValue) -> None:
    assert hand_value(cards) == value


@pytest.mark.parametrize(
    ("cards", "split", "expected"),
    [
        (["AS", "KH"], False, True),
        (["10D", "A"], False, True),
        (["A", "Q"], True, False),
        (["A", "5", "5"], False, False),
        (["7", "7", "7"], False, False),
        (["A", "9"], False, False),
    ],
)
def test_blackjack_is_an_ace_and_a_ten_as_the_first_two_cards_of_an_unsplit_hand(
    cards: list[str], split: bool, expected: bool
) -> None:
    assert is_blackjack(cards, split) is expected


@pytest.mark.parametrize(
    ("cards", "bust", "charlie"),
    [
        (["10", "5", "7"], True, False),
        (["10", "A", "K"], False, False),
        (["2", "2", "3", "3", "4", "A"], False, True),
        (["2", "2", "3", "3", "4", "7"], False, True),
        (["2", "2", "3", "3", "4", "K"], True, False),
        (["A", "A", "2", "2", "3", "3", "A"], False, True),
        (["2", "2", "3", "3", "4"], False, False),
    ],
)
def test_six_cards_not_over_21_are_a_charlie(cards: list[str], bust: bool, charlie: bool) -> None:
    assert is_bust(cards) is bust
    assert is_six_card_charlie(cards) is charlie


@pytest.mark.parametrize(
    ("dealer_cards", "draws"),
    [
        (["10", "6"], True),
        (["A", "5"], True),
        (["9", "7"], True),
        (["A", "6"], False),
        (["10", "7"], False),
        (["A", "A", "5"], False),
        (["5", "A", "A", "10"], False),
        (["K", "A"], False),
    ],
)
def test_the_dealer_draws_on_16_and_stands_on_every_17_soft_17_too(
    dealer_cards: list[str], draws: bool
) -> None:
    assert dealer_needs_card(dealer_cards) is draws


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [("Q", "QH", True), ("KS", "10S", False), ("A", "AD", True), ("10", "10C", True)],
)
def test_only_cards_of_the_same_rank_match_for_a_split(
    first: str, second: str, expected: bool
) -> None:
    assert same_rank(first, second) is expected


# (player cards, split, dealer cards, stake, outcome, net)
SETTLEMENTS = [
    (["A", "K"], False, ["10", "7"], 15, OUTCOME_BLACKJACK, 22),
    (["A", "K"], False, ["10", "7"], 100, OUTCOME_BLACKJACK, 150),
    (["A", "K"], False, ["9", "7", "5"], 1, OUTCOME_BLACKJACK, 1),
    (["A", "K"], False, ["A", "Q"], 100, OUTCOME_PUSH, 0),
    (["10", "9"], False, ["A", "Q"], 100, OUTCOME_LOSE, -100),
    (["6", "5", "9"], False, ["A", "Q"], 200, OUTCOME_LOSE, -200),
    (["2", "2", "3", "3", "4", "A"], False, ["A", "Q"], 100, OUTCOME_LOSE, -100),
    (["2", "2", "3", "3", "4", "A"], False, ["10", "6", "5"], 100, OUTCOME_CHARLIE, 100),
    (["2", "2", "3", "3", "2", "2"], False, ["10", "9"], 100, OUTCOME_CHARLIE, 100),
    (["A", "K"], True, ["10", "9"], 100, OUTCOME_WIN, 100),
    (["A", "K"], True, ["10", "A"], 100, OUTCOME_LOSE, -100),
    (["A", "K"], True, ["10", "5", "6"], 100, OUTCOME_PUSH, 0),
    (["10", "8"], False, ["10", "6", "9"], 100, OUTCOME_WIN, 100),
    (["10", "8"], False, ["10", "8"], 100, OUTCOME_PUSH, 0),
    (["10", "8"], False, ["10", "9"], 100, OUTCOME_LOSE, -100),
    (["10", "5", "9"], False, ["10", "6", "9"], 100, OUTCOME_BUST, -100),
    (["10", "5", "9"], False, ["A", "K"], 100, OUTCOME_BUST, -100),
]


@pytest.mark.parametrize(
    ("cards", "split", "dealer_cards", "stake_cents", "outcome", "net_cents"), SETTLEMENTS
)
def test_a_hand_settles_against_the_dealer_by_the_rule_book(
    cards: list[str],
    split: bool,
    dealer_cards: list[str],
    stake_cents: int,
    outcome: str,
    net_cents: int,
) -> None:
    assert hand_outcome(cards, split=split, dealer_cards=dealer_cards) == outcome
    assert settle_hand(cards, stake_cents, split=split, dealer_cards=dealer_cards) == net_cents


def test_blackjack_on_an_odd_stake_pays_3_to_2_rounded_down_to_the_cent() -> None:
    assert settle_hand(["AS", "QH"], 15, split=False, dealer_cards=["9", "8"]) == 22


@pytest.mark.parametrize(
    ("box_stake_cents", "insurance_cents"), [(100, 50), (15, 7), (10, 5), (1, 0)]
)
def test_insurance_costs_half_the_bet_rounded_down_to_the_cent(
    box_stake_cents: int, insurance_cents: int
) -> None:
    assert insurance_stake_cents(box_stake_cents) == insurance_cents


@pytest.mark.parametrize(
    ("dealer_cards", "net_cents"),
    [(["A", "K"], 100), (["A", "9"], -50), (["A", "5", "5"], -50), (["A", "6"], -50)],
)
def test_insurance_pays_2_to_1_on_a_dealer_blackjack_and_is_lost_otherwise(
    dealer_cards: list[str], net_cents: int
) -> None:
    assert settle_insurance(50, dealer_cards) == net_cents


@pytest.mark.parametrize(
    ("dealer_cards", "box_bust", "net_cents"),
    [(["A", "K"], True, -50), (["A", "K"], False, 100), (["A", "9"], True, -50)],
)
def test_insurance_on_a_box_that_busted_is_lost_even_to_a_dealer_blackjack(
    dealer_cards: list[str], box_bust: bool, net_cents: int
) -> None:
    assert settle_insurance(50, dealer_cards, box_bust=box_bust) == net_cents


def test_even_money_pays_1_to_1_on_the_box_stake() -> None:
    assert settle_even_money(15) == 15


@pytest.mark.parametrize("box_number", list(range(1, BOXES_MAX + 1)))
def test_boxes_1_to_5_are_valid(box_number: int) -> None:
    assert validate_box_number(box_number) == box_number


@pytest.mark.parametrize("box_number", [0, 6, -1, "1", 1.0, True, None])
def test_any_other_box_number_is_refused(box_number: object) -> None:
    with pytest.raises(InvalidBox, match="from 1 to 5"):
        validate_box_number(box_number)
