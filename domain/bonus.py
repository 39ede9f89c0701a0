"""Bonus money (rules.md 9): the pure rules, over plain values.

A bonus lives in the player's real wallet (`domain/wallet.py`), beside the cash: these
functions say what a grant may be, how a stake splits between cash and bonus, how a
return splits back, what a round counts towards the wagering, when a bet breaks the
surebet rule and what a conversion pays. No clock, no I/O: the wallet records what
they decide.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from domain.errors import (
    BonusMaxBet,
    BonusNotAllowed,
    BonusSurebet,
    InvalidBonus,
    WageringAboveCap,
)
from domain.money import AMOUNT_CENTS_MAX, format_cents

CASINO_BONUS = "casino:bonus"  # the casino's promotion cost: where a grant comes from
ACTIVE = "active"
WAITING = "waiting"
CONVERTED = "converted"
FORFEITED = "forfeited"
EXPIRED = "expired"
ENDED = (CONVERTED, FORFEITED, EXPIRED)
WAGERING_MAX_DEFAULT = 10  # CASINO_BONUS_WAGERING_MAX, as GB's rule
WAGERING_CAP_MAX = 100  # the setting's own bound
EXPIRY_DAYS_MIN, EXPIRY_DAYS_MAX = 1, 90
BONUSES_WAITING_MAX = 20  # in line behind the active one
BONUSES_PAST_KEPT_MAX = 50  # ended bonuses a wallet remembers (the read model keeps all)
# A bet makes a surebet when the chance at least one of the player's bets in the round
# wins passes this (seed 003).
SUREBET_CHANCE = Fraction(9, 10)


def bonus_account(player_id: str) -> str:
    """The ledger account of a player's bonus money (a liability, like their cash)."""
    return f"bonus:{player_id}"


@dataclass(frozen=True)
class Grant:
    """What an operator grants, checked: cents, the wagering multiple, the expiry."""

    amount_cents: int
    wagering: int
    expires_in_days: int
    max_bet_cents: int | None = None
    max_conversion_cents: int | None = None

    def check(self, wagering_cap: int) -> None:
        if not 0 < self.amount_cents <= AMOUNT_CENTS_MAX:
            raise InvalidBonus("a bonus amount must be greater than zero")
        if self.wagering > wagering_cap:
            raise WageringAboveCap(
                f"a wagering requirement of {self.wagering}x passes the cap of "
                f"{wagering_cap}x (CASINO_BONUS_WAGERING_MAX)",
                cap=wagering_cap,
            )
        if self.wagering < 1:
            raise InvalidBonus(f"wagering is a whole multiple from 1 to {wagering_cap}")
        if not EXPIRY_DAYS_MIN <= self.expires_in_days <= EXPIRY_DAYS_MAX:
            raise InvalidBonus(
                f"a bonus expires in {EXPIRY_DAYS_MIN}-{EXPIRY_DAYS_MAX} days, "
                f"not {self.expires_in_days}"
            )
        for name, cents in (
            ("max_bet", self.max_bet_cents),
            ("max_conversion", self.max_conversion_cents),
        ):
            if cents is not None and not 0 < cents <= AMOUNT_CENTS_MAX:
                raise InvalidBonus(f"{name} must be greater than zero")

    def expires_at(self, now: datetime.datetime) -> str:
        return (now + datetime.timedelta(days=self.expires_in_days)).isoformat()


@dataclass(frozen=True)
class Split:
    """How much of one stake, or of what a round returns, is cash and how much bonus."""

    cash_cents: int
    bonus_cents: int


def split_stake(
    amount_cents: int, cash_cents: int, bonus_cents: int, bonus_allowed: bool
) -> Split | None:
    """Cash first, then bonus where the game allows it; None when they do not cover it.
    In a player-banked game a stake the bonus would have covered is refused."""
    if amount_cents <= cash_cents:
        return Split(amount_cents, 0)
    if not bonus_allowed:
        if amount_cents <= cash_cents + bonus_cents:
            raise BonusNotAllowed(
                f"cannot stake {format_cents(amount_cents)}: this game takes cash only "
                f"(a bonus is never what another player wins), and only "
                f"{format_cents(cash_cents)} cash is available",
                available=format_cents(cash_cents),
            )
        return None
    if amount_cents > cash_cents + bonus_cents:
        return None
    return Split(cash_cents, amount_cents - cash_cents)


def split_return(returned_cents: int, held: Split) -> Split:
    """What a settled stake returns, in the proportion it was staked: the bonus share
    rounded down to the cent, the rest to cash."""
    staked = held.cash_cents + held.bonus_cents
    assert staked > 0 and returned_cents >= 0, (staked, returned_cents)
    bonus = returned_cents * held.bonus_cents // staked
    return Split(returned_cents - bonus, bonus)


def conversion(available_cents: int, max_conversion_cents: int | None, converted: int) -> Split:
    """A met requirement: what becomes cash (up to the maximum conversion, less what
    converted before) and what is forfeited (the rest): Split(to cash, forfeited)."""
    room = available_cents if max_conversion_cents is None else max_conversion_cents - converted
    to_cash = max(0, min(available_cents, room))
    return Split(to_cash, available_cents - to_cash)


def check_max_bet(amount_cents: int, max_bet_cents: int | None) -> None:
    if max_bet_cents is not None and amount_cents > max_bet_cents:
        raise BonusMaxBet(
            f"a stake of {format_cents(amount_cents)} on one spot passes the bonus's maximum "
            f"stake of {format_cents(max_bet_cents)} while it is wagered",
            max_bet=format_cents(max_bet_cents),
        )


def check_surebet(surebet: bool, round_bonus_cents: int, balance_before_cents: int) -> None:
    """Seed 003: bets that make a surebet may not stake more than half of the bonus
    balance as it stood before the round's first bet."""
    limit = balance_before_cents // 2
    if surebet and round_bonus_cents > limit:
        raise BonusSurebet(
            f"these bets win together more than 90% of the time: at most "
            f"{format_cents(limit)} of bonus money (half the bonus balance) may be staked "
            f"on them, not {format_cents(round_bonus_cents)}",
            limit=format_cents(limit),
            bonus_staked=format_cents(round_bonus_cents),
        )


def baccarat_wagered(spots: dict[str, int], outcome: str | None) -> int:
    """What a player's baccarat bets in one settled round count towards the wagering:
    Player and Banker only |Player - Banker| (nothing when a tie returns them), a Tie
    its stake; a void (no outcome) nothing."""
    if outcome is None:
        return 0
    player, banker = spots.get("player", 0), spots.get("banker", 0)
    hedged = 0 if outcome == "tie" else abs(player - banker)
    return hedged + spots.get("tie", 0)


def is_surebet(chance_any_wins: Fraction) -> bool:
    """Whether a player's bets in a round win together often enough to be a surebet."""
    return chance_any_wins > SUREBET_CHANCE


def bonus_bet_problems(
    name: str, entries: list[tuple[str, str, Any]], surebet: Callable[[str], bool]
) -> list[str]:
    """The audit's check of a settled round's bets under a bonus (`casino audit verify`):
    `entries` are (player, topic, event) of the wallets' `BonusHeld` and `BonusReleased`
    (or `EndedBonusReleased`) for the round, in order; `surebet` says whether a player's
    bets in it win together more than 90% of the time. Every stake on a spot, the bet
    added, within the bonus's maximum stake, and a surebet's bonus money within half
    the balance before the round."""
    # Per player and bonus: a round's record, and its balance before, last as long as
    # the bonus does (bets all taken back keep it).
    problems, staked, before = [], dict[tuple[str, Any], int](), dict[tuple[str, Any], int]()
    for player, topic, event in entries:
        key = (player, getattr(event, "bonus_id", None))
        if topic.endswith("BonusReleased"):  # of the active bonus, or of an ended one
            staked[key] = staked.get(key, 0) - int(event.amount_cents)
            continue
        staked[key] = staked.get(key, 0) + int(event.amount_cents)
        before.setdefault(key, int(event.balance_before_cents))
        max_bet = event.max_bet_cents
        # The player's whole stake on the spot, recorded since it bounds it; before, the bet.
        spot = max(int(event.stake_cents), int(getattr(event, "spot_cents", None) or 0))
        if max_bet is not None and spot > max_bet:
            problems.append(
                f"{name}: {player} staked {spot} cents on one spot, past the bonus's "
                f"maximum stake of {max_bet}"
            )
    for (player, bonus_id), cents in sorted(staked.items(), key=lambda item: str(item[0])):
        if (player, bonus_id) not in before:
            continue  # released only: nothing staked under it in this round
        if cents > before[(player, bonus_id)] // 2 and surebet(player):
            problems.append(
                f"{name}: {player} staked {cents} cents of bonus money on a surebet, past "
                f"half of {before[(player, bonus_id)]}"
            )
    return problems
