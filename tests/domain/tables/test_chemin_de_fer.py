"""Chemin de fer's drawing rules (rules.md 2.3), cell by cell, each choice both ways,
written out by hand here as an oracle; and what a punto bet wins."""

from __future__ import annotations

import pytest

from domain.tables.chemin_de_fer import (
    BANKER,
    PUNTO,
    chemin_de_fer_bet_net,
    chemin_de_fer_choosers,
    chemin_de_fer_tableau,
)
from domain.tables.tableau import Choice, Draw, Over, Step

# A card of each value: 10 counts 0.
CARD = {value: "10" if value == 0 else "A" if value == 1 else str(value) for value in range(10)}
# The banker's row (their two-card total) against the punto's third card, 0-9, then "-"
# for a punto who stood. D draws, S stands, C chooses (the system: draws).
BANKER_TABLE = {
    0: "DDDDDDDDDDD",
    1: "DDDDDDDDDDD",
    2: "DDDDDDDDDDD",
    3: "DDDDDDDDSCD",
    4: "SSDDDDDDSSD",
    5: "SSSSCDDDSSD",
    6: "SSSSSSDDSSS",
    7: "SSSSSSSSSSS",
}


def two_cards(total: int) -> list[str]:
    """Two cards making a total, neither a natural nor any help: 10 and the value."""
    return ["10", CARD[total]]


def step(punto: list[str], banker: list[str], choices: dict[str, str] | None = None) -> Step:
    return chemin_de_fer_tableau({PUNTO: punto, BANKER: banker}, choices or {}, {})


@pytest.mark.parametrize("total", range(8))
def test_the_punters_hand_draws_on_0_to_4_chooses_on_5_stands_on_6_and_7(total: int) -> None:
    first = step(two_cards(total), two_cards(3))
    if total <= 4:
        assert first == Draw(PUNTO)
    elif total == 5:
        assert first == Choice(PUNTO, PUNTO, ("draw", "stand"), "draw")
        assert step(two_cards(5), two_cards(3), {PUNTO: "draw"}) == Draw(PUNTO)
        stood = step(two_cards(5), two_cards(3), {PUNTO: "stand"})
        assert stood == Draw(BANKER)  # the banker's 3 against a punto who stood
    else:
        assert first == Draw(BANKER)  # the punto stands; the banker's 3 draws against it


@pytest.mark.parametrize("banker_total", range(8))
@pytest.mark.parametrize("third", [*range(10), None])
def test_every_cell_of_the_bankers_table(banker_total: int, third: int | None) -> None:
    cell = BANKER_TABLE[banker_total][10 if third is None else third]
    punto = [*two_cards(4), CARD[third]] if third is not None else two_cards(6)
    got = step(punto, two_cards(banker_total))
    if cell == "D":
        assert got == Draw(BANKER)
    elif cell == "S":
        assert isinstance(got, Over)
    else:
        assert got == Choice(BANKER, BANKER, ("draw", "stand"), "draw")
        assert step(punto, two_cards(banker_total), {BANKER: "draw"}) == Draw(BANKER)
        assert isinstance(step(punto, two_cards(banker_total), {BANKER: "stand"}), Over)


@pytest.mark.parametrize("hand", [["9", "10"], ["8", "10"]])
def test_a_natural_in_either_hand_ends_the_coup(hand: list[str]) -> None:
    assert isinstance(step(hand, two_cards(2)), Over)
    assert isinstance(step(two_cards(2), hand), Over)


@pytest.mark.parametrize(("punto", "banker", "net"), [(7, 6, 1000), (6, 7, -1000), (5, 5, 0)])
def test_a_punto_bet_is_paid_1_to_1_from_the_bank_collected_or_returned(
    punto: int, banker: int, net: int
) -> None:
    assert chemin_de_fer_bet_net(PUNTO, 1000, {PUNTO: punto, BANKER: banker}, 0) == net


def test_the_highest_stake_plays_the_punto_the_first_in_play_order_on_equal_stakes() -> None:
    bets = {"cat": {PUNTO: 500}, "bob": {PUNTO: 500}, "dan": {PUNTO: 200}}
    assert chemin_de_fer_choosers(bets, ["cat", "dan", "bob"], "ann") == {
        BANKER: "ann",
        PUNTO: "cat",
    }
    assert chemin_de_fer_choosers(bets, ["bob", "cat", "dan"], "ann")[PUNTO] == "bob"
