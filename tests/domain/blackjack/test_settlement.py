"""Settling a finished round (rules.md 3): insurance pays only on a box that did not bust,
a split box being bust only when both its hands are; rounds of the first ruleset
keep the rule they were played by."""

from __future__ import annotations

import pytest

from domain.blackjack.settlement import RULESET, RULESETS, settle_round
from domain.blackjack.state import PHASE_OVER, PlayState
from tests.domain.blackjack.test_play import dealt, play

# Box 1 holds 10,6 against the dealer's ace up and king in the hole: a blackjack.
BUSTS = [(1, 0, "insurance", []), (1, 0, "hit", ["9"])]
STANDS = [(1, 0, "insurance", []), (1, 0, "stand", [])]


def insured(*steps: tuple[int, int, str, list[str]], cards: list[str] | None = None) -> PlayState:
    state = play(dealt({1: cards or ["10", "6"]}, ["A", "K"], stake_cents=2000), *steps)
    assert state["phase"] == PHASE_OVER
    return state


def test_an_insured_box_that_busts_loses_its_insurance_to_a_dealer_blackjack() -> None:
    box = settle_round(insured(*BUSTS))["boxes"][0]
    assert (box["insurance_net_cents"], box["hands"][0]["outcome"], box["net_cents"]) == (
        -1000,
        "bust",
        -3000,
    )


def test_an_insured_box_that_stands_is_paid_2_to_1_on_a_dealer_blackjack() -> None:
    box = settle_round(insured(*STANDS))["boxes"][0]
    assert (box["insurance_net_cents"], box["net_cents"]) == (2000, 0)


@pytest.mark.parametrize(
    ("second_hand", "insurance_net"),
    [(["hit", "K"], -1000), (["stand", None], 2000)],
    ids=["both hands bust", "one hand stands"],
)
def test_a_split_box_is_bust_only_when_both_its_hands_are(
    second_hand: list[str | None], insurance_net: int
) -> None:
    action, card = second_hand
    state = insured(
        (1, 0, "insurance", []),
        (1, 0, "split", ["5", "6"]),  # 8,5 and 8,6
        (1, 0, "hit", ["K"]),  # 8,5,K: bust
        (1, 1, str(action), [card] if card else []),
        cards=["8", "8"],
    )
    assert settle_round(state)["boxes"][0]["insurance_net_cents"] == insurance_net


def test_rounds_of_the_first_ruleset_keep_paying_insurance_on_a_busted_box() -> None:
    first = RULESETS["baden-baden@1"]
    assert RULESET.name == "baden-baden@2" and not first.insurance_needs_unbusted_box
    box = settle_round(insured(*BUSTS), first)["boxes"][0]
    assert (box["insurance_net_cents"], box["net_cents"]) == (2000, 0)
