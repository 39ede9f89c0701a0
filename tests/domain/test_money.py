import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.money import (
    AMOUNT_CENTS_MAX,
    InvalidAmount,
    format_cents,
    fraction_down,
    fraction_half_up,
    parse_amount,
)


@pytest.mark.parametrize(
    ("text", "cents"),
    [("10.00", 1000), ("0.95", 95), ("0.5", 50), ("7", 700), ("1000000", 100_000_000), ("0.01", 1)],
)
def test_amounts_with_at_most_two_places_parse_to_exact_cents(text: str, cents: int) -> None:
    assert parse_amount(text) == cents


@pytest.mark.parametrize(
    "text",
    [
        "-1.00",
        "0",
        "0.00",
        "abc",
        "1.005",
        "1e3",
        " 1.00",
        "1,00",
        "01.00",
        ".5",
        "1.",
        "NaN",
        "Infinity",
        "9999999999999999",
        "",
        "+1",
    ],
)
def test_anything_but_a_positive_two_place_decimal_is_refused(text: str) -> None:
    with pytest.raises(InvalidAmount):
        parse_amount(text)


@pytest.mark.parametrize("value", [10, 10.5, None, ["1.00"]])
def test_amounts_must_be_strings_not_json_numbers(value: object) -> None:
    with pytest.raises(InvalidAmount):
        parse_amount(value)


def test_the_largest_accepted_amount_is_a_trillion_dollars() -> None:
    assert parse_amount(format_cents(AMOUNT_CENTS_MAX)) == AMOUNT_CENTS_MAX
    with pytest.raises(InvalidAmount):
        parse_amount("1000000000000.01")


@given(st.integers(min_value=1, max_value=AMOUNT_CENTS_MAX))
def test_formatting_then_parsing_gives_back_the_same_cents(cents: int) -> None:
    assert parse_amount(format_cents(cents)) == cents


@pytest.mark.parametrize(
    ("cents", "text"), [(0, "0.00"), (5, "0.05"), (-5, "-0.05"), (-1050, "-10.50")]
)
def test_negative_and_small_amounts_format_with_two_places(cents: int, text: str) -> None:
    assert format_cents(cents) == text


def test_blackjack_three_to_two_on_fifteen_cents_pays_twenty_two() -> None:
    assert fraction_down(15, 3, 2) == 22


def test_commission_of_one_point_seven_five_percent_on_ten_dollars_is_eighteen_cents() -> None:
    assert fraction_half_up(1000, 175, 10_000) == 18


@pytest.mark.parametrize(
    ("cents", "expected"), [(100, 2), (200, 4), (10_000, 175), (35_000, 613), (90_000, 1575)]
)
def test_commission_rounds_half_up_to_the_cent(cents: int, expected: int) -> None:
    assert fraction_half_up(cents, 175, 10_000) == expected
