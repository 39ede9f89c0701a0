"""Measure the pure baccarat engine: coups per second, and the exact-odds enumeration.

Usage: python benchmarks/bench_baccarat_engine.py

- fresh shoes: what a table does, one coup per round from a shoe shuffled for that
  round with a fresh seed (rules.md: reshuffled before every round), so the
  provably fair shuffle of 416 cards is most of the cost;
- precomputed shoes: play_coup alone, dealing coup after coup through shoes
  shuffled beforehand;
- odds: seconds for the exact 8-deck enumeration (`casino rules baccarat --odds`).
"""

from __future__ import annotations

import time

from domain.baccarat.odds import exact_odds
from domain.baccarat.rules import play_coup
from domain.shoe import draw_seed, shuffled_shoe

DECKS = 8
SECONDS_PER_MEASURE = 3.0
PRECOMPUTED_SHOES = 200
CARDS_PER_COUP_MAX = 6


def coups_per_second_fresh_shoes(seconds: float = SECONDS_PER_MEASURE) -> float:
    """Shuffle a fresh 8-deck shoe from a fresh seed, then play one coup from it."""
    coups, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        play_coup(shuffled_shoe(draw_seed(), DECKS))
        coups += 1
    return coups / elapsed


def coups_per_second_precomputed(seconds: float = SECONDS_PER_MEASURE) -> float:
    """Deal coup after coup through shoes shuffled beforehand: the engine alone."""
    shoes = [shuffled_shoe(draw_seed(), DECKS) for _ in range(PRECOMPUTED_SHOES)]
    coups, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        for shoe in shoes:
            coups += _deal_through(shoe)
    return coups / elapsed


def _deal_through(shoe: list[str]) -> int:
    """Play coups from the top of the shoe until fewer than six cards are left."""
    position, coups = 0, 0
    while position + CARDS_PER_COUP_MAX <= len(shoe):
        position += play_coup(shoe[position : position + CARDS_PER_COUP_MAX]).cards_used
        coups += 1
    return coups


def odds_enumeration_seconds() -> float:
    """Seconds for the exact odds of an 8-deck shoe, tie paying 8 to 1."""
    started = time.perf_counter()
    exact_odds(decks=DECKS, tie_pays=8)
    return time.perf_counter() - started


def run() -> dict[str, float]:
    return {
        "coups_per_second_fresh_8_deck_shoes": coups_per_second_fresh_shoes(),
        "coups_per_second_precomputed_8_deck_shoes": coups_per_second_precomputed(),
        "odds_enumeration_8_decks_seconds": odds_enumeration_seconds(),
    }


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value:,.3f}" if value < 100 else f"{name}: {value:,.0f}")
