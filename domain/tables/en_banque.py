"""Baccarat en banque, à deux tableaux (rules.md 2.4): a banker plays one hand against
two, the right and the left, each played by the highest stake on it; bets go on one
side or à cheval on both; the banker chooses on 3-6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.baccarat.rules import banker_draws, card_value, hand_total, is_natural
from domain.errors import InvalidStake, WrongSide
from domain.money import CENTS_PER_DOLLAR
from domain.tables.chemin_de_fer import punters_step, side_result
from domain.tables.tableau import (
    CHOICE_ACTIONS,
    DRAW,
    STAND,
    Choice,
    Draw,
    Hands,
    Over,
    Step,
    TableGameRules,
    highest_stake,
)

EN_BANQUE = "en_banque"
RIGHT, LEFT, BANKER, BOTH = "right", "left", "banker", "both"
SIDES = (RIGHT, LEFT)  # the right is played first
BANKERS_SEAT = "B"  # the banker's own, in the middle: no punter sits there
BANKER_DRAWS_MAX, BANKER_STANDS_FROM = 2, 7  # 0-2 draws, 3-6 chooses, 7 stands
RESULTS = {1: "wins", 0: "ties", -1: "loses"}


def en_banque_tableau(hands: Hands, choices: Mapping[str, str], stakes: Mapping[str, int]) -> Step:
    banker = hands[BANKER]
    if is_natural(hand_total(banker[:2])):
        return over(hands)  # a banker's natural ends the coup at once, nobody drawing
    for side in SIDES:
        if not is_natural(hand_total(hands[side][:2])):  # a side's natural stands
            step = punters_step(side, hands[side], choices)
            if step is not None:
                return step
    total = hand_total(banker)
    if len(banker) == 2 and total <= BANKER_DRAWS_MAX:
        return Draw(BANKER)
    if len(banker) == 2 and total < BANKER_STANDS_FROM:
        if BANKER not in choices:
            return Choice(BANKER, BANKER, CHOICE_ACTIONS, banker_default(hands, stakes))
        if choices[BANKER] == DRAW:
            return Draw(BANKER)
    return over(hands)


def banker_default(hands: Hands, stakes: Mapping[str, int]) -> str:
    """The system's choice: the punto banco banker rule against the side holding the
    larger total stake (on equal stakes, the right)."""
    side = RIGHT if stakes.get(RIGHT, 0) >= stakes.get(LEFT, 0) else LEFT
    third = card_value(hands[side][2]) if len(hands[side]) == 3 else None
    return DRAW if banker_draws(hand_total(hands[BANKER][:2]), third) else STAND


def over(hands: Hands) -> Over:
    banker = hand_total(hands[BANKER])
    results = [RESULTS[side_result(hand_total(hands[side]), banker)] for side in SIDES]
    return Over(f"right {results[0]}, left {results[1]}")


def en_banque_bet_net(spot: str, stake_cents: int, totals: Mapping[str, int], tie_pays: int) -> int:
    """Each side against the banker, 1:1; à cheval on both: half the stake per side, so it
    wins when both win, loses when both lose, is returned when one wins and one loses or
    both tie, and wins or loses half with one tie."""
    right = side_result(totals[RIGHT], totals[BANKER])
    left = side_result(totals[LEFT], totals[BANKER])
    if spot == BOTH:
        assert stake_cents % (2 * CENTS_PER_DOLLAR) == 0, "à cheval stakes are even dollars"
        return stake_cents * (right + left) // 2
    return stake_cents * (right if spot == RIGHT else left)


def check_a_cheval(spot: str, amount_cents: int) -> None:
    if spot == BOTH and amount_cents % (2 * CENTS_PER_DOLLAR):
        raise InvalidStake("an à cheval bet is an even number of dollars: half rides on each side")


def side_of(seat: str) -> str:
    return RIGHT if seat.startswith("R") else LEFT


def check_side(seat: str, spot: str) -> None:
    """A punter bets on their own side's hand, or à cheval on both (rules.md 2.4)."""
    side = side_of(seat)
    if spot not in (side, BOTH):
        raise WrongSide(
            f"seat {seat} is on the {side} tableau: bet on {side} or à cheval on both, "
            f"not on {spot} alone",
            seat=seat,
            side=side,
        )


def en_banque_choosers(
    bets: Mapping[str, Mapping[str, int]], order: Sequence[str], banker: str | None
) -> dict[str, str]:
    """Each side played by the highest stake on it (à cheval stakes do not count; a
    banco caller is then the only one left betting), the banker by the banker."""
    playing = {BANKER: banker} if banker is not None else {}
    for side in SIDES:
        player = highest_stake(bets, order, side)
        if player is not None:
            playing[side] = player
    return playing


EN_BANQUE_RULES = TableGameRules(
    name=EN_BANQUE,
    seats=tuple(f"R{n}" for n in range(1, 6)) + tuple(f"L{n}" for n in range(1, 6)),
    spots=(RIGHT, LEFT, BOTH),
    deal_order=(RIGHT, LEFT, BANKER, RIGHT, LEFT, BANKER),
    tableau=en_banque_tableau,
    bet_net=en_banque_bet_net,
    choosers=en_banque_choosers,
    player_banked=True,
)
