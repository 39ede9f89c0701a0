"""Baccarat en banque's rules (rules.md 2.4): two hands against the banker, each side's
choice on 5, the banker's on 3-6 with the system's default against the heavier side,
naturals, and à cheval bets."""

from __future__ import annotations

import pytest

from domain.errors import InvalidStake
from domain.tables.en_banque import (
    BANKER,
    BOTH,
    LEFT,
    RIGHT,
    check_a_cheval,
    en_banque_bet_net,
    en_banque_choosers,
    en_banque_tableau,
)
from domain.tables.tableau import Choice, Draw, Over, Step

CARD = {value: "10" if value == 0 else "A" if value == 1 else str(value) for value in range(10)}


def cards(total: int, third: int | None = None) -> list[str]:
    two = ["10", CARD[total]]
    return two if third is None else [*two, CARD[third]]


def step(
    right: list[str], left: list[str], banker: list[str], choices: dict[str, str] | None = None
) -> Step:
    """The next step, more money riding on the left than on the right."""
    stakes = {RIGHT: 100, LEFT: 300}
    return en_banque_tableau({RIGHT: right, LEFT: left, BANKER: banker}, choices or {}, stakes)


def test_a_bankers_natural_ends_the_coup_at_once_nobody_drawing() -> None:
    assert step(cards(2), cards(3), ["9", "10"]) == Over("right loses, left loses")


def test_a_sides_natural_stands_and_the_other_side_plays_on() -> None:
    assert step(["8", "10"], cards(3), cards(4)) == Draw(LEFT)


def test_each_side_draws_on_0_to_4_and_chooses_on_5_the_right_first() -> None:
    assert step(cards(4), cards(5), cards(6)) == Draw(RIGHT)
    assert step(cards(5), cards(5), cards(6)) == Choice(RIGHT, RIGHT, ("draw", "stand"), "draw")
    after_right = step(cards(5), cards(5), cards(6), {RIGHT: "stand"})
    assert after_right == Choice(LEFT, LEFT, ("draw", "stand"), "draw")
    assert step(cards(5, 2), cards(5), cards(6), {RIGHT: "draw"}) == Choice(
        LEFT, LEFT, ("draw", "stand"), "draw"
    )


@pytest.mark.parametrize("total", [0, 1, 2])
def test_the_banker_draws_on_0_to_2(total: int) -> None:
    assert step(cards(6), cards(7), cards(total)) == Draw(BANKER)


def test_the_banker_stands_on_7() -> None:
    assert isinstance(step(cards(6), cards(6), cards(7)), Over)


@pytest.mark.parametrize("total", [3, 4, 5, 6])
def test_the_banker_chooses_on_3_to_6_and_either_choice_is_taken(total: int) -> None:
    owed = step(cards(6), cards(7), cards(total))
    assert isinstance(owed, Choice) and (owed.hand, owed.actions) == (BANKER, ("draw", "stand"))
    assert step(cards(6), cards(7), cards(total), {BANKER: "draw"}) == Draw(BANKER)
    assert isinstance(step(cards(6), cards(7), cards(total), {BANKER: "stand"}), Over)


@pytest.mark.parametrize(
    ("banker", "right_third", "left_third", "default"),
    [
        (3, 8, 2, "draw"),  # against the left (more money): 3 draws on a 2
        (3, 2, 8, "stand"),  # 3 stands against an 8
        (6, 6, 1, "stand"),  # against the left's 1: 6 stands
        (6, 1, 6, "draw"),  # against the left's 6: 6 draws
        (5, None, None, "draw"),  # both stood: 5 draws
    ],
)
def test_the_systems_banker_plays_against_the_side_holding_more_money(
    banker: int, right_third: int | None, left_third: int | None, default: str
) -> None:
    right = cards(3, right_third) if right_third is not None else cards(6)
    left = cards(3, left_third) if left_third is not None else cards(7)
    owed = step(right, left, cards(banker))
    assert isinstance(owed, Choice) and owed.default == default


def test_on_equal_stakes_the_system_plays_against_the_right() -> None:
    hands = {RIGHT: cards(3, 8), LEFT: cards(3, 2), BANKER: cards(3)}
    owed = en_banque_tableau(hands, {}, {RIGHT: 200, LEFT: 200})
    assert isinstance(owed, Choice) and owed.default == "stand"  # 3 against an 8


# A bet's net at the end, for a $20 stake: right and left against the banker's 5.
@pytest.mark.parametrize(
    ("right", "left", "on_right", "on_left", "a_cheval"),
    [
        (7, 6, 2000, 2000, 2000),  # both win
        (2, 3, -2000, -2000, -2000),  # both lose
        (7, 3, 2000, -2000, 0),  # one wins, one loses: returned
        (5, 5, 0, 0, 0),  # both tie: returned
        (5, 7, 0, 2000, 1000),  # a tie and a win: wins half
        (5, 1, 0, -2000, -1000),  # a tie and a loss: loses half
    ],
)
def test_each_side_pays_1_to_1_and_a_cheval_rides_half_on_each(
    right: int, left: int, on_right: int, on_left: int, a_cheval: int
) -> None:
    totals = {RIGHT: right, LEFT: left, BANKER: 5}
    assert en_banque_bet_net(RIGHT, 2000, totals, 0) == on_right
    assert en_banque_bet_net(LEFT, 2000, totals, 0) == on_left
    assert en_banque_bet_net(BOTH, 2000, totals, 0) == a_cheval


def test_an_a_cheval_bet_is_an_even_number_of_dollars() -> None:
    check_a_cheval(BOTH, 2000)
    check_a_cheval(RIGHT, 1500)
    with pytest.raises(InvalidStake, match="even number of dollars"):
        check_a_cheval(BOTH, 1500)


def test_each_side_is_played_by_its_highest_stake_a_cheval_not_counting() -> None:
    bets = {"ann": {RIGHT: 500, BOTH: 5000}, "bob": {RIGHT: 700}, "cat": {BOTH: 9000}}
    assert en_banque_choosers(bets, ["ann", "bob", "cat"], "dan") == {BANKER: "dan", RIGHT: "bob"}
