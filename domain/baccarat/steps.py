"""Baccarat: opening house rounds, and the bet/remove/deal steps of every baccarat round."""

from __future__ import annotations

import datetime
from typing import Any

from domain.baccarat.p2p_steps import close_if_dealer_gone, end_round, void_round
from domain.baccarat.round import HOUSE, OPEN, P2P, BaccaratRound
from domain.seam import CommandSeam, Outcome, Receipt, Unit
from domain.settings import check_certification
from domain.shoe import draw_seed
from domain.wallet import CASINO_BANK


class BaccaratCommands(CommandSeam):
    def open_house_round(
        self,
        player_id: str,
        mode: str,
        shoe_prefix: list[str] | None = None,
        receipt: Receipt | None = None,
    ) -> Outcome[BaccaratRound]:
        check_certification(self.games, shoe_prefix)
        house = self.games.house

        def command(unit: Unit) -> BaccaratRound:
            unit.wallet(player_id, mode)  # The player must exist.
            round_ = BaccaratRound.open(
                variant=HOUSE,
                mode=mode,
                player_id=player_id,
                limits=(house.stake_min_cents, house.stake_max_cents),
                decks=house.decks,
                tie_pays=house.tie_pays,
                seed=draw_seed(),
                shoe_prefix=shoe_prefix,
            )
            round_.check_shoe()
            unit.add(round_)
            return round_

        return self.run(command, receipt)


class BaccaratGame:
    """The steps every baccarat round shares; the round commands dispatch here."""

    def end_idle(self, unit: Unit, round_: Any, idle_since: datetime.datetime) -> bool:
        """Void a round still open with no action since `idle_since` (RULES.md 4): every
        stake and the dealer's hold go back. A round acted on since is left alone."""
        assert isinstance(round_, BaccaratRound)
        if round_.status != OPEN or round_.modified_on > idle_since:
            return False
        void_round(unit, round_, "no action before the idle timeout")
        if round_.table_id is not None:
            table = unit.table(round_.table_id)
            table.void_round(round_.round_id, "idle timeout")
            close_if_dealer_gone(unit, table)
        return True

    def place_bet(self, unit: Unit, round_: Any, target: str, amount_cents: int) -> None:
        assert isinstance(round_, BaccaratRound)
        round_.place_bet(target, amount_cents)
        unit.wallet(round_.player_id, round_.mode).hold(round_.round_id, amount_cents)

    def remove_bet(self, unit: Unit, round_: Any, target: str) -> None:
        assert isinstance(round_, BaccaratRound)
        amount = round_.remove_bet(target)
        unit.wallet(round_.player_id, round_.mode).release(round_.round_id, amount)

    def deal(self, unit: Unit, round_: Any) -> None:
        assert isinstance(round_, BaccaratRound)
        round_.deal()
        if round_.variant == P2P:
            settle_p2p(unit, round_)
            end_round(unit, round_)
        else:
            settle_house(unit, round_)


def settle_house(unit: Unit, round_: BaccaratRound) -> None:
    """The casino is the bank: the player's result posts against casino:bank."""
    wallet = unit.wallet(round_.player_id, round_.mode)
    wallet.settle(round_.round_id, round_.player_net_cents, CASINO_BANK)
    award_player_points(unit, round_)


def settle_p2p(unit: Unit, round_: BaccaratRound) -> None:
    """The dealer pays winners and collects losers; then pays the casino's commission.

    Each side posts its own leg in this save; together they sum to zero.
    """
    assert round_.dealer_id is not None
    player = unit.wallet(round_.player_id, round_.mode)
    dealer = unit.wallet(round_.dealer_id, round_.mode)
    player.settle(round_.round_id, round_.player_net_cents, None)
    dealer.settle(round_.round_id, -round_.player_net_cents, None)
    dealer.charge_commission(round_.round_id, round_.commission_cents)
    award_player_points(unit, round_)
    dollars = round_.total_stake_cents // 100
    dealer.change_points(-dollars, "dealer", round_.round_id, "baccarat stakes against the dealer")


def award_player_points(unit: Unit, round_: BaccaratRound) -> None:
    """A player gains one dealer point per dollar staked in any baccarat round."""
    dollars = round_.total_stake_cents // 100
    wallet = unit.wallet(round_.player_id, round_.mode)
    wallet.change_points(dollars, "player", round_.round_id, "baccarat stake")
