"""Money: integer cents inside, decimal strings with at most two places at the edge.

Every rounding rule of the project is written here, once.
"""

from __future__ import annotations

import re

from domain.errors import InvalidAmount

CENTS_PER_DOLLAR = 100  # The currency is USD by default (rules.md 1).
BASIS_POINTS = 10_000  # A rate of 175 basis points is 1.75%.
# A single amount above this is refused as absurd: one trillion dollars, in cents.
AMOUNT_CENTS_MAX = 100_000_000_000_000
# The most a wallet may hold (rules.md 6): $1,000,000,000,000.00; also the highest
# deposit or loss limit a player may set (rules.md 7).
BALANCE_CENTS_MAX = 100_000_000_000_000

_AMOUNT_PATTERN = re.compile(r"(0|[1-9][0-9]{0,14})(?:\.([0-9]{1,2}))?")


def parse_amount(text: object) -> int:
    """Turn "10.50" into 1050 cents; refuse anything that is not an exact, positive amount."""
    if not isinstance(text, str):
        raise InvalidAmount('amount must be a decimal string such as "10.00"')
    match = _AMOUNT_PATTERN.fullmatch(text)  # fullmatch: '$' alone lets "10.00\n" in
    if match is None:
        raise InvalidAmount(f"amount {text!r} is not a decimal with at most two places")
    units, fraction = match.group(1), (match.group(2) or "").ljust(2, "0")
    cents = int(units) * CENTS_PER_DOLLAR + int(fraction)
    if cents <= 0:
        raise InvalidAmount("amount must be greater than zero")
    if cents > AMOUNT_CENTS_MAX:
        raise InvalidAmount(f"amount {text} is above the largest accepted amount")
    return cents


def parse_limit(text: object) -> int:
    """Like `parse_amount`, but zero is an amount too: a limit of "0.00" allows nothing."""
    if isinstance(text, str) and _AMOUNT_PATTERN.fullmatch(text) and not text.strip("0."):
        return 0
    return parse_amount(text)


def format_cents(cents: int) -> str:
    """Turn 1050 into "10.50" and -5 into "-0.05"."""
    sign = "-" if cents < 0 else ""
    units, fraction = divmod(abs(cents), CENTS_PER_DOLLAR)
    return f"{sign}{units}.{fraction:02d}"


def fraction_down(cents: int, numerator: int, denominator: int) -> int:
    """cents x numerator / denominator, rounded down to the cent (in the house's favour).

    Used for payouts with a fractional cent: blackjack 3:2, insurance stakes, banker 19:20.
    """
    assert cents >= 0 and numerator >= 0 and denominator > 0
    return cents * numerator // denominator


def fraction_half_up(cents: int, numerator: int, denominator: int) -> int:
    """cents x numerator / denominator, rounded half up to the cent.

    Used for commissions: 1.75% of $10 = 17.5 cents -> 18 cents.
    """
    assert cents >= 0 and numerator >= 0 and denominator > 0
    return (2 * cents * numerator + denominator) // (2 * denominator)


def basis_points_half_up(cents: int, basis_points: int) -> int:
    """A rate in basis points of an amount, rounded half up to the cent (commissions)."""
    return fraction_half_up(cents, basis_points, BASIS_POINTS)
