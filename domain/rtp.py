"""Return to player (docs/rules.md 7, the RTP report): what each bet returns in theory,
and how far a tally of settled rounds may stray from it by chance.

Pure: exact fractions for baccarat's bets (full enumeration of the shoe,
`domain/baccarat/odds.py`), the simulation's figure for blackjack, and the ratio
estimator's interval for the difference. Money stays in integer cents; the figures are
`Decimal`s, never floats, so the same tally always gives the same digits.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction

from domain.baccarat.odds import exact_odds
from domain.baccarat.rules import BANKER, PLAYER, TIE

BACCARAT, BLACKJACK = "baccarat", "blackjack"
# A provider's rounds (rules.md 10): the variant is the provider, the spot the return it
# declared when the round opened ("0.965"), or UNDECLARED.
EXTERNAL, UNDECLARED = "external", "undeclared"
# Baccarat's variants whose spots play as punto banco's: the player, banker and tie bets.
PUNTO_BANCO_SPOTS = ("house", "p2p", "punto_banco")
CHEMIN_DE_FER, PUNTO = "chemin_de_fer", "punto"
BLACKJACK_SPOT = "box"  # a blackjack round's stakes, all its boxes together
# Blackjack Baden-Baden under basic strategy, two decks, no insurance or even money:
# return per cent staked (doubles and splits included), from
# `python benchmarks/bench_blackjack_sim.py 2000000` (seed 2024: 99.8986%), and that
# figure's own standard error, which the interval below takes in (the run's 95%
# half-width of 0.1541% per unit first staked, / 1.96, / 1.0996 units staked per round).
BLACKJACK_DECKS = 2
BLACKJACK_RTP = Fraction("0.998986")
BLACKJACK_RTP_STANDARD_ERROR = Fraction("0.000715")
SOURCES = {
    BACCARAT: "exact: full enumeration of the shoe (domain/baccarat/odds.py)",
    BLACKJACK: "simulation: basic strategy, 2,000,000 rounds (benchmarks/bench_blackjack_sim.py)",
    EXTERNAL: "declared by the provider at registration",
}
Z_95 = Decimal("1.959964")  # the standard normal's 97.5% quantile
DIGITS = Decimal("0.000001")  # figures to six places: a ten-thousandth of a per cent


@dataclass(frozen=True, slots=True)
class Rules:
    """What a round's theoretical return depends on besides the bet."""

    game: str
    variant: str
    decks: int
    tie_pays: int


@functools.cache
def spot_rtp(rules: Rules, spot: str) -> Fraction | None:
    """What one unit staked on `spot` returns on average, stake included; None where no
    exact or simulated figure exists (en banque's two tableaux; blackjack with other
    than two decks)."""
    if rules.game == BLACKJACK:
        return BLACKJACK_RTP if rules.decks == BLACKJACK_DECKS else None
    if rules.game == EXTERNAL:
        return None if spot == UNDECLARED else Fraction(spot)
    if rules.variant in PUNTO_BANCO_SPOTS and spot in (PLAYER, BANKER, TIE):
        odds = exact_odds(rules.decks, rules.tie_pays)
        edges = {PLAYER: odds.house_edge_player, BANKER: odds.house_edge_banker}
        return 1 - edges.get(spot, odds.house_edge_tie)
    if rules.variant == CHEMIN_DE_FER and spot == PUNTO:
        # With the system's default choices a coup plays as punto banco (rules.md 2.3):
        # the punto's bet wins 1:1 when the player's hand does, a tie pushes.
        return 1 - exact_odds(rules.decks, 1).house_edge_player
    return None


@dataclass
class Tally:
    """Settled rounds added up: their stakes and returns in cents, the moments the
    interval needs (sums of squares and products, exact integers), and the stakes per
    rules and spot that weigh the theoretical figure."""

    rounds: int = 0
    stakes_cents: int = 0
    returns_cents: int = 0
    return_squares: int = 0
    return_stakes: int = 0
    stake_squares: int = 0
    spots: dict[tuple[Rules, str], int] = field(default_factory=dict)

    def add_round(self, rules: Rules, spots: dict[str, tuple[int, int]]) -> None:
        """One settled round: (stake, return) in cents per spot, return stake included."""
        stake = sum(staked for staked, _ in spots.values())
        returned = sum(back for _, back in spots.values())
        self.add(1, stake, returned, returned * returned, returned * stake, stake * stake)
        for spot, (staked, _) in spots.items():
            self.add_spot(rules, spot, staked)

    def add(self, rounds: int, stakes: int, returns: int, *moments: int) -> None:
        self.rounds += rounds
        self.stakes_cents += stakes
        self.returns_cents += returns
        self.return_squares += moments[0]
        self.return_stakes += moments[1]
        self.stake_squares += moments[2]

    def add_spot(self, rules: Rules, spot: str, stakes_cents: int) -> None:
        self.spots[(rules, spot)] = self.spots.get((rules, spot), 0) + stakes_cents


@dataclass(frozen=True, slots=True)
class Figures:
    actual: Decimal | None  # returns / stakes
    theoretical: Decimal | None  # each spot's figure, weighed by what was staked on it
    difference: Decimal | None  # actual - theoretical
    interval: tuple[Decimal, Decimal] | None  # 95% for the difference


def figures(tally: Tally) -> Figures:
    if tally.stakes_cents <= 0:
        return Figures(None, None, None, None)
    actual = Fraction(tally.returns_cents, tally.stakes_cents)
    theoretical = _theoretical(tally)
    if theoretical is None:
        return Figures(_decimal(actual), None, None, None)
    difference = actual - theoretical
    interval = None
    if tally.rounds >= 2:
        half = Z_95 * _sqrt(_variance(tally, actual) + _theory_variance(tally))
        centre = _decimal(difference)
        interval = ((centre - half).quantize(DIGITS), (centre + half).quantize(DIGITS))
    return Figures(_decimal(actual), _decimal(theoretical), _decimal(difference), interval)


def _theoretical(tally: Tally) -> Fraction | None:
    weighed = Fraction(0)
    for (rules, spot), stakes in tally.spots.items():
        rtp = spot_rtp(rules, spot)
        if rtp is None:
            return None
        weighed += rtp * stakes
    return weighed / tally.stakes_cents


def _variance(tally: Tally, ratio: Fraction) -> Fraction:
    """The ratio estimator's variance: n / ((n - 1) S^2) x sum of (r - ratio x s)^2 over
    the rounds, expanded into the moments kept."""
    n, stakes = tally.rounds, tally.stakes_cents
    squares = (
        tally.return_squares - 2 * ratio * tally.return_stakes + ratio**2 * tally.stake_squares
    )
    return Fraction(n, (n - 1) * stakes * stakes) * squares


def _theory_variance(tally: Tally) -> Fraction:
    """A simulated figure is itself an estimate: its variance adds to the interval."""
    share = sum(
        (stakes for (rules, _), stakes in tally.spots.items() if rules.game == BLACKJACK), 0
    )
    return (BLACKJACK_RTP_STANDARD_ERROR * share / tally.stakes_cents) ** 2


def _decimal(value: Fraction) -> Decimal:
    with localcontext() as context:
        context.prec = 40
        return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(DIGITS)


def _sqrt(value: Fraction) -> Decimal:
    with localcontext() as context:
        context.prec = 40
        return (Decimal(value.numerator) / Decimal(value.denominator)).sqrt()
