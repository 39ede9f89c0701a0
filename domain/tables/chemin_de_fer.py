"""Chemin de fer (rules.md 2.3): a seated player holds the bank, the punters bet against
it on one hand, the punto; the playing punter chooses on a 5, the banker in two
cells; every other draw is fixed.

With every choice made as the system makes it (draw on 5; the banker draws on 3
against a 9 and on 5 against a 4), the coup plays exactly as punto banco.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.baccarat.rules import banker_draws, card_value, hand_total, is_natural
from domain.tables.tableau import (
    CHOICE_ACTIONS,
    DRAW,
    Choice,
    Draw,
    Hands,
    Over,
    Step,
    TableGameRules,
    highest_stake,
)

CHEMIN_DE_FER = "chemin_de_fer"
PUNTO, BANKER, TIE = "punto", "banker", "tie"
PUNTO_DRAWS_MAX, PUNTO_CHOOSES = 4, 5  # the punters' hand: 0-4 draw, 5 chooses, 6-7 stand
# (the banker's total, the punto's third card's value) where the banker chooses.
BANKER_CHOOSES = frozenset({(3, 9), (5, 4)})


def punters_step(hand: str, cards: Sequence[str], choices: Mapping[str, str]) -> Step | None:
    """The punters' drawing rule (rules.md 2.3), for the hand `hand`, whoever plays it."""
    if len(cards) != 2:
        return None
    total = hand_total(cards)
    if total <= PUNTO_DRAWS_MAX:
        return Draw(hand)
    if total == PUNTO_CHOOSES:
        if hand not in choices:
            return Choice(hand, hand, CHOICE_ACTIONS, DRAW)
        if choices[hand] == DRAW:
            return Draw(hand)
    return None


def banker_step(total: int, third: int | None, choices: Mapping[str, str]) -> Step | None:
    """The banker against one hand: the punto banco tableau, but two cells are his choice."""
    if (total, third) in BANKER_CHOOSES:
        if BANKER not in choices:
            return Choice(BANKER, BANKER, CHOICE_ACTIONS, DRAW)
        return Draw(BANKER) if choices[BANKER] == DRAW else None
    return Draw(BANKER) if banker_draws(total, third) else None


def chemin_de_fer_tableau(
    hands: Hands, choices: Mapping[str, str], stakes: Mapping[str, int]
) -> Step:
    punto, banker = hands[PUNTO], hands[BANKER]
    if is_natural(hand_total(punto[:2])) or is_natural(hand_total(banker[:2])):
        return over(hands)
    step = punters_step(PUNTO, punto, choices)
    if step is None and len(banker) == 2:
        third = card_value(punto[2]) if len(punto) == 3 else None
        step = banker_step(hand_total(banker), third, choices)
    return step or over(hands)


def over(hands: Hands) -> Over:
    punto, banker = hand_total(hands[PUNTO]), hand_total(hands[BANKER])
    return Over(TIE if punto == banker else PUNTO if punto > banker else BANKER)


def side_result(side_total: int, banker_total: int) -> int:
    """+1 the punters' side wins, -1 it loses, 0 a tie (égalité)."""
    return (side_total > banker_total) - (side_total < banker_total)


def chemin_de_fer_bet_net(
    spot: str, stake_cents: int, totals: Mapping[str, int], tie_pays: int
) -> int:
    """1:1 from the bank; collected by it; returned on a tie."""
    return stake_cents * side_result(totals[PUNTO], totals[BANKER])


def chemin_de_fer_choosers(
    bets: Mapping[str, Mapping[str, int]], order: Sequence[str], banker: str | None
) -> dict[str, str]:
    """The banco caller (the only one left betting), else the highest stake, on equal
    stakes the first in play order from the banker's next seat; and the banker."""
    playing = {BANKER: banker} if banker is not None else {}
    punter = highest_stake(bets, order, PUNTO)
    return {**playing, PUNTO: punter} if punter is not None else playing


CHEMIN_DE_FER_RULES = TableGameRules(
    name=CHEMIN_DE_FER,
    seats=tuple(str(seat) for seat in range(1, 13)),
    spots=(PUNTO,),
    deal_order=(PUNTO, BANKER, PUNTO, BANKER),
    tableau=chemin_de_fer_tableau,
    bet_net=chemin_de_fer_bet_net,
    choosers=chemin_de_fer_choosers,
    player_banked=True,
)
