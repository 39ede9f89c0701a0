from collections import Counter

import pytest

from domain.cards import (
    DECKS_MAX,
    RANKS,
    SUITS,
    InvalidCard,
    build_shoe_cards,
    parse_card,
    parse_cards,
    rank_of,
    standard_deck,
)


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("QH", "QH"),
        ("qh", "QH"),
        ("Qh", "QH"),
        ("10s", "10S"),
        ("AD", "AD"),
        ("a", "A"),
        ("10", "10"),
        ("K", "K"),
        (" 7C ", "7C"),
    ],
)
def test_parse_card_accepts_a_rank_with_or_without_a_suit(text: str, card: str) -> None:
    assert parse_card(text) == card


@pytest.mark.parametrize("text", ["", "1", "11", "T", "QX", "Q H", "QHH", "HQ", "10SS", "0"])
def test_parse_card_refuses_text_that_is_not_a_card(text: str) -> None:
    with pytest.raises(InvalidCard, match="is not a card"):
        parse_card(text)


@pytest.mark.parametrize("value", [10, None, ["Q"], 1.0])
def test_parse_card_refuses_values_that_are_not_strings(value: object) -> None:
    with pytest.raises(InvalidCard, match="must be a string"):
        parse_card(value)


def test_parse_cards_names_the_first_bad_card() -> None:
    assert parse_cards(["qh", "10", "as"]) == ["QH", "10", "AS"]
    with pytest.raises(InvalidCard, match="'ZZ'"):
        parse_cards(["QH", "ZZ", "YY"])
    with pytest.raises(InvalidCard, match="must be a string"):
        parse_cards(["QH", ["unhashable"]])


@pytest.mark.parametrize(("card", "rank"), [("10S", "10"), ("QH", "Q"), ("Q", "Q"), ("AC", "A")])
def test_rank_of_strips_the_suit(card: str, rank: str) -> None:
    assert rank_of(card) == rank


def test_rank_of_refuses_a_card_that_is_not_canonical() -> None:
    with pytest.raises(InvalidCard):
        rank_of("qh")


def test_standard_deck_is_suit_by_suit_then_rank_by_rank() -> None:
    deck = standard_deck()
    assert deck[:3] == ["AS", "2S", "3S"]
    assert deck[12:14] == ["KS", "AH"]
    assert deck[-1] == "KC"
    assert len(set(deck)) == len(deck) == len(RANKS) * len(SUITS) == 52


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_a_shoe_holds_every_card_once_per_deck(decks: int) -> None:
    shoe = build_shoe_cards(decks)
    assert shoe[:52] == standard_deck()
    assert Counter(shoe) == Counter({card: decks for card in standard_deck()})


@pytest.mark.parametrize("decks", [0, -1, DECKS_MAX + 1])
def test_a_shoe_refuses_an_impossible_number_of_decks(decks: int) -> None:
    with pytest.raises(ValueError, match="decks"):
        build_shoe_cards(decks)


def test_every_card_string_round_trips_through_parsing() -> None:
    for card in standard_deck() + list(RANKS):
        assert parse_card(card) == card
        assert parse_card(card.lower()) == card
