"""Playing cards as plain strings: a rank, optionally followed by a suit letter.

A card is "QH", "10S" or "AD"; a bare rank such as "Q" stands for a card whose
suit is unknown or does not matter. Cards stay plain strings because they are
stored in JSON event bodies and must read back exactly as they were written.

The standard deck order is suit by suit (spades, hearts, diamonds, clubs) and,
within a suit, rank by rank (A, 2, ..., 10, J, Q, K): "AS", "2S", ..., "KS",
"AH", ..., "KC". A shoe of N decks is that order repeated N times. The shuffle
in `domain/shoe.py` starts from this order, so it is part of the audit contract.
"""

from __future__ import annotations

from collections.abc import Sequence

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
CARDS_PER_DECK = len(RANKS) * len(SUITS)
DECKS_MAX = 8


class InvalidCard(ValueError):
    """Text that is not a rank, or a rank followed by a suit letter."""


def _spellings(token: str) -> set[str]:
    """Every way to write a rank or suit token, upper or lower case."""
    return {token, token.lower(), token.upper()}


def _canonical_cards() -> dict[object, str]:
    """Map every accepted spelling of a card or bare rank to its canonical string."""
    canonical: dict[object, str] = {}
    for rank in RANKS:
        for rank_spelling in _spellings(rank):
            canonical[rank_spelling] = rank
            for suit in SUITS:
                for suit_spelling in _spellings(suit):
                    canonical[rank_spelling + suit_spelling] = rank + suit
    return canonical


# One dict lookup parses a card: bulk rule checks parse millions of them.
_CANONICAL = _canonical_cards()
_RANK_OF = {card: card[:-1] if card[-1] in SUITS else card for card in _CANONICAL.values()}
_DECK = tuple(rank + suit for suit in SUITS for rank in RANKS)


def parse_card(text: object) -> str:
    """Turn "qh", "QH" or "Q" into the canonical "QH" or "Q"; refuse anything else."""
    if not isinstance(text, str):
        raise InvalidCard(f'a card must be a string such as "QH" or "10", not {text!r}')
    card = _CANONICAL.get(text) or _CANONICAL.get(text.strip())
    if card is None:
        raise InvalidCard(
            f"{text!r} is not a card: expected a rank (A, 2-10, J, Q, K) "
            "optionally followed by a suit letter (S, H, D, C)"
        )
    return card


def parse_cards(texts: Sequence[object]) -> list[str]:
    """parse_card over a list, refusing the first bad card."""
    try:
        return [_CANONICAL[text] for text in texts]
    except (KeyError, TypeError):
        # The slow path only runs to name the bad card.
        return [parse_card(text) for text in texts]


def rank_of(card: str) -> str:
    """The rank of a canonical card: "10S" -> "10", "Q" -> "Q"."""
    rank = _RANK_OF.get(card)
    if rank is None:
        raise InvalidCard(f'{card!r} is not a canonical card such as "QH" or "10"')
    return rank


def standard_deck() -> list[str]:
    """The 52 cards in the fixed order of this module's docstring."""
    return list(_DECK)  # (made once: every audited round builds its shoe again)


def build_shoe_cards(decks: int) -> list[str]:
    """`decks` standard decks one after another, unshuffled."""
    if not 1 <= decks <= DECKS_MAX:
        raise ValueError(f"a shoe holds 1 to {DECKS_MAX} decks, not {decks}")
    return standard_deck() * decks
