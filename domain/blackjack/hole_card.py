"""The dealer's hole card (rules.md 3, 5): dealt face down, and kept out of the store.

A round in play stores only the hole card's place in the shoe (`HoleCardDealt` with
`hole_card` null), and the shoe's seed is sealed, so nobody reading the database
learns it; its play state does not hold it either. The round turns it over
(`HoleCardRevealed`, `play.turn_hole_card`) once the players are done, or at once
when the dealer's check of a ten-valued up card finds a blackjack: either way in the
save that ends the round and reveals the seed. Rounds dealt before this stored the
card in clear in `HoleCardDealt`; their state holds it from the deal, hidden all the
same while the players act.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.blackjack.hands import is_blackjack, is_ten_valued
from domain.blackjack.state import PHASE_INSURANCE, PHASE_PLAYERS, PlayState


def awaits_hole_card(state: PlayState) -> bool:
    """The hole card lies face down and the state does not hold it yet."""
    return len(state["dealer_cards"]) < 2


def hole_card_hidden(state: PlayState) -> bool:
    """Players may not see the hole card: they are still acting, or it is face down."""
    return state["phase"] in (PHASE_INSURANCE, PHASE_PLAYERS) or awaits_hole_card(state)


def ten_up_blackjack(dealer_cards: Sequence[str]) -> bool:
    """The dealer checks a ten-valued up card at once: does the hole card make a blackjack?"""
    if len(dealer_cards) != 2:
        return False
    return is_ten_valued(dealer_cards[0]) and is_blackjack(dealer_cards, split=False)


def dealer_checks_blackjack(state: PlayState, hole_card: str) -> bool:
    """Right after a deal, the hole card face down: the dealer's check finds a blackjack
    under a ten-valued up card, so the round turns the hole card over at once."""
    return awaits_hole_card(state) and ten_up_blackjack([*state["dealer_cards"], hole_card])
