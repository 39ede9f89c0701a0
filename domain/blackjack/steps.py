"""Blackjack's steps of the round commands: each moves the round and the player's holds.

Every stake is held when it is placed: a box's bet at the bet, a double, a split
or insurance when it is chosen (refused with insufficient_funds if the player
cannot cover it, before anything changes). When the round settles, one wallet
settlement against casino:bank releases the whole hold and posts the result.

No round is dealt while another of the player's rounds in that mode is
interrupted, and a round left in play by its deal joins the player's rounds in
play (`domain/blackjack_interruptions.py`).
"""

from __future__ import annotations

import datetime
from typing import Any

from domain.blackjack.interruptions import after_deal, after_settlement, finish_idle_round
from domain.blackjack.last_bets import LastBets, last_bets_uuid
from domain.blackjack.round import IN_PLAY, OPEN, SETTLED_STATUS, BlackjackRound, parse_box
from domain.errors import BetsAlreadyPlaced, NoPreviousBets
from domain.seam import Unit
from domain.wallet import CASINO_BANK, Wallet


class BlackjackGame:
    """The steps of a blackjack round; the round commands dispatch here."""

    def end_idle(self, unit: Unit, round_: Any, idle_since: datetime.datetime) -> bool:
        return end_idle(unit, round_, idle_since)

    def place_bet(self, unit: Unit, round_: Any, target: str, amount_cents: int) -> None:
        assert isinstance(round_, BlackjackRound)
        round_.place_bet(parse_box(target), amount_cents)
        _wallet(unit, round_).hold(round_.round_id, amount_cents)

    def remove_bet(self, unit: Unit, round_: Any, target: str) -> None:
        assert isinstance(round_, BlackjackRound)
        amount = round_.remove_bet(parse_box(target))
        _wallet(unit, round_).release(round_.round_id, amount)

    def deal(self, unit: Unit, round_: Any) -> None:
        assert isinstance(round_, BlackjackRound)
        round_.check_open()
        unit.player(round_.player_id).check_no_interrupted_round(round_.mode)
        round_.deal()
        last_bets(unit, round_).record(round_.round_id, round_.bets)
        settle_if_over(unit, round_)
        after_deal(unit, round_)

    def act(self, unit: Unit, round_: BlackjackRound, box: int, hand: int, action: str) -> None:
        added = round_.stake_to_add(box, hand, action)  # Refuses an illegal action first.
        if added:
            _wallet(unit, round_).hold(round_.round_id, added)
        round_.act(box, hand, action)
        settle_if_over(unit, round_)

    def repeat_bets(self, unit: Unit, round_: BlackjackRound) -> None:
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
            self.place_bet(unit, round_, str(box), cents)


def end_idle(unit: Unit, round_: Any, idle_since: datetime.datetime) -> bool:
    """Void a round never dealt, or finish one in play with the house defaults, when
    it has seen no action since `idle_since`. Interrupted rounds wait for the resume
    window instead. Returns whether the round was ended."""
    assert isinstance(round_, BlackjackRound)
    if round_.modified_on > idle_since or round_.status not in (OPEN, IN_PLAY):
        return False
    if round_.status == OPEN:
        round_.void("no action before the idle timeout")
        wallet = _wallet(unit, round_)
        if round_.round_id in wallet.holds:
            wallet.release(round_.round_id)
        return True
    finish_idle_round(unit, round_)
    settle_if_over(unit, round_)
    return True


def settle_if_over(unit: Unit, round_: BlackjackRound) -> None:
    """The casino is the bank: the round's result posts against casino:bank, once."""
    if round_.status == SETTLED_STATUS:
        _wallet(unit, round_).settle(round_.round_id, round_.player_net_cents, CASINO_BANK)
        after_settlement(unit, round_)


def last_bets(unit: Unit, round_: BlackjackRound) -> LastBets:
    """The player's last bets in this hall and mode, opened the first time they are needed."""
    aggregate_id = last_bets_uuid(round_.player_id, round_.mode, round_.hall)
    try:
        return unit.get(LastBets, aggregate_id, lambda: NoPreviousBets("none yet"))
    except NoPreviousBets:
        created = LastBets(round_.player_id, round_.mode, round_.hall)
        unit.add(created)
        return created


def _wallet(unit: Unit, round_: BlackjackRound) -> Wallet:
    return unit.wallet(round_.player_id, round_.mode)
