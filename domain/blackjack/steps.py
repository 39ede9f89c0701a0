"""Blackjack's steps: open a round in a hall, bet, deal, act, repeat and cancel bets,
end an idle round, finish an abandoned one.

Every stake is held when it is placed: a box's bet at the bet, a double, a split
or insurance when it is chosen (refused with insufficient_funds if the player
cannot cover it, before anything changes). When the round settles, one wallet
settlement against casino:bank releases the whole hold and posts the result.

No round is dealt while another of the player's rounds in that mode is
interrupted, and a round left in play by its deal joins the player's rounds in
play (`domain/blackjack/interruptions.py`).
"""

from __future__ import annotations

import datetime

from domain.blackjack.interruptions import (
    after_deal,
    after_settlement,
    finish_idle_round,
    finish_with_house_defaults,
)
from domain.blackjack.last_bets import LastBets, last_bets_uuid
from domain.blackjack.odds import chance_any_wins
from domain.blackjack.play import DOUBLE
from domain.blackjack.round import IN_PLAY, OPEN, SETTLED_STATUS, BlackjackRound
from domain.blackjack.settlement import RULESETS, wagered_cents
from domain.bonus import is_surebet
from domain.bonus_steps import wallet_at
from domain.errors import BetsAlreadyPlaced, NoBets, NoPreviousBets
from domain.player import load_player
from domain.settings import BlackjackSettings
from domain.shoe import draw_seed
from domain.unit import Unit
from domain.wallet import CASINO_BANK, Wallet, load_wallet


def open_round(
    unit: Unit,
    settings: BlackjackSettings,
    player_id: str,
    mode: str,
    hall: str,
    shoe_prefix: list[str] | None,
) -> BlackjackRound:
    limits = settings.hall(hall)
    load_wallet(unit, player_id, mode)  # The player must exist.
    load_player(unit, player_id).check_no_interrupted_round(mode)
    round_ = BlackjackRound.open(
        mode=mode,
        player_id=player_id,
        hall=limits,
        decks=settings.decks,
        box=unit.sealing(),
        seed=draw_seed(),
        shoe_prefix=shoe_prefix,
    )
    round_.check_shoe()
    unit.add(round_)
    return round_


def place_bet(
    unit: Unit, round_: BlackjackRound, box: int, amount_cents: int, now: datetime.datetime
) -> None:
    round_.place_bet(box, amount_cents)
    _hold(unit, round_, amount_cents, round_.bets[box], now)


def remove_bet(unit: Unit, round_: BlackjackRound, box: int) -> None:
    amount = round_.remove_bet(box)
    _wallet(unit, round_).release(round_.round_id, amount)


def cancel_bets(unit: Unit, round_: BlackjackRound) -> None:
    """Take every stake back before the deal."""
    if not round_.bets:
        raise NoBets("there are no bets to cancel")
    for box in sorted(round_.bets):
        remove_bet(unit, round_, box)


def repeat_bets(unit: Unit, round_: BlackjackRound, now: datetime.datetime) -> None:
    """Place the bets of the player's last round dealt in this hall and mode again."""
    round_.check_open()
    if round_.bets:
        raise BetsAlreadyPlaced("repeat bets needs an empty table: cancel the bets first")
    previous = last_bets(unit, round_)
    if not previous.bets:
        raise NoPreviousBets(
            f"no earlier {round_.mode} round in hall {round_.hall} to repeat the bets of"
        )
    for box, cents in previous.bets:
        place_bet(unit, round_, box, cents, now)


def deal(unit: Unit, round_: BlackjackRound, now: datetime.datetime) -> None:
    round_.check_open()
    load_player(unit, round_.player_id).check_no_interrupted_round(round_.mode)
    round_.deal()
    last_bets(unit, round_).record(round_.round_id, round_.bets)
    settle_if_over(unit, round_, now)
    after_deal(unit, round_)


def act(
    unit: Unit, round_: BlackjackRound, box: int, hand: int, action: str, now: datetime.datetime
) -> None:
    """The player's decision on the hand in play, decided once, its stake held first."""
    decision = round_.decide(box, hand, action)
    if decision.added_stake_cents:
        added = decision.added_stake_cents
        # A double joins its hand's stake; a split's hand and insurance stand alone.
        spot = round_.bets[box] + added if action == DOUBLE else added
        _hold(unit, round_, added, spot, now)
    round_.act(decision)
    settle_if_over(unit, round_, now)


def end_idle(
    unit: Unit, round_: BlackjackRound, idle_since: datetime.datetime, now: datetime.datetime
) -> bool:
    """Void a round never dealt, or finish one in play with the house defaults, when
    it has seen no action since `idle_since`. Interrupted rounds wait for the resume
    window instead. Returns whether the round was ended."""
    if round_.modified_on > idle_since or round_.status not in (OPEN, IN_PLAY):
        return False
    if round_.status == OPEN:
        round_.void("no action before the idle timeout")
        _wallet(unit, round_).void_round(round_.round_id)
        return True
    finish_idle_round(unit, round_)
    settle_if_over(unit, round_, now)
    return True


def finish_abandoned(
    unit: Unit,
    round_: BlackjackRound,
    interrupted_before: datetime.datetime,
    now: datetime.datetime,
) -> bool:
    """Finish a round interrupted at or before `interrupted_before` with the house
    defaults (rules.md 4); a round resumed since, or interrupted later, is left alone."""
    interrupted_at = round_.interrupted_at
    if interrupted_at is None or interrupted_at > interrupted_before:
        return False
    finish_with_house_defaults(round_)
    settle_if_over(unit, round_, now)
    return True


def settle_if_over(unit: Unit, round_: BlackjackRound, now: datetime.datetime) -> None:
    """The casino is the bank: the round's result posts against casino:bank, once (a
    bonus past its expiry by `now` ended first)."""
    if round_.status == SETTLED_STATUS:
        wallet = wallet_at(unit, now, round_.player_id, round_.mode)
        # What it counts towards a bonus, only where one was active at its stakes.
        under_bonus = round_.round_id in wallet.bonus_rounds
        wagered = wagered_cents(round_.state, RULESETS[round_.ruleset]) if under_bonus else 0
        shares = wallet.settle(round_.round_id, round_.player_net_cents, CASINO_BANK, wagered)
        if shares is not None:
            round_.record_bonus_share(round_.player_id, shares.cash_cents, shares.bonus_cents)
        after_settlement(unit, round_)


def last_bets(unit: Unit, round_: BlackjackRound) -> LastBets:
    """The player's last bets in this hall and mode, opened the first time they are needed."""
    aggregate_id = last_bets_uuid(round_.player_id, round_.mode, round_.hall)
    found = unit.find(LastBets, aggregate_id)
    if found is None:
        found = LastBets(round_.player_id, round_.mode, round_.hall)
        unit.add(found)
    return found


def _hold(
    unit: Unit, round_: BlackjackRound, amount_cents: int, spot_cents: int, now: datetime.datetime
) -> None:
    """A stake, a double, a split or insurance: the house banks, so bonus money may be
    staked, within the bonus's maximum stake on the box's hand (`spot_cents`, a double
    included), and no set of a player's bets in one round wins together more than 90%
    of the time (`odds.chance_any_wins`, rules.md 9)."""
    insured = round_.play is not None  # after the deal, insurance may be in play
    surebet = is_surebet(chance_any_wins(len(round_.bets), insured))
    wallet = wallet_at(unit, now, round_.player_id, round_.mode)
    wallet.hold(round_.round_id, amount_cents, True, surebet, spot_cents)


def _wallet(unit: Unit, round_: BlackjackRound) -> Wallet:
    return load_wallet(unit, round_.player_id, round_.mode)
