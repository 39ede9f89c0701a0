"""The baccarat round aggregate, for the house game and for P2P tables.

Every bet, card, third-card draw, payout, commission and the settlement is its
own event. The shoe is fixed before any bet by the seed in the `Opened` event;
the deal re-derives it and records each card, so an auditor can check every
card against the revealed seed. Event bodies only assign: the coup is played
in the command method, outside them.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate, event

from domain.baccarat import rules as baccarat
from domain.copying import FastCopy
from domain.errors import (
    AboveTableMaximum,
    BelowTableMinimum,
    NoBets,
    NoStakeOnSpot,
    RoundNotOpen,
    UnknownRound,
)
from domain.money import format_cents
from domain.rounds import CommittedRound, load_round, open_sealed
from domain.unit import SecretBox, Unit

ROUND = "casino:BaccaratRound"
OPENED = "casino:BaccaratRound.Opened"
BET_PLACED = "casino:BaccaratRound.BetPlaced"
BET_REMOVED = "casino:BaccaratRound.BetRemoved"
CARD_DEALT = "casino:BaccaratRound.CardDealt"
THIRD_CARD_DRAWN = "casino:BaccaratRound.ThirdCardDrawn"
PAYOUT_MADE = "casino:BaccaratRound.PayoutMade"
COMMISSION_CHARGED = "casino:BaccaratRound.CommissionCharged"
SETTLED = "casino:BaccaratRound.Settled"
VOIDED = "casino:BaccaratRound.Voided"

OPEN, SETTLED_STATUS, VOIDED_STATUS = "open", "settled", "voided"
HOUSE, P2P = "house", "p2p"


class BaccaratRound(CommittedRound, FastCopy, Aggregate):
    TOPIC = ROUND

    class Created(Aggregate.Created):
        TOPIC = OPENED
        variant: str
        mode: str
        player_id: str
        dealer_id: str | None
        table_id: str | None
        decks: int
        tie_pays: int
        stake_min_cents: int
        stake_max_cents: int
        commission_basis_points: int
        seed: str | None  # null since seeds are sealed; in clear before
        seed_commitment: str
        shoe_prefix: list[str] | None
        shuffle_algorithm: str
        sealed_secrets: str | None  # the seed and the certification shoe, encrypted

    @event(Created)
    def __init__(
        self,
        variant: str,
        mode: str,
        player_id: str,
        dealer_id: str | None,
        table_id: str | None,
        decks: int,
        tie_pays: int,
        stake_min_cents: int,
        stake_max_cents: int,
        commission_basis_points: int,
        seed: str | None,
        seed_commitment: str,
        shoe_prefix: list[str] | None,
        shuffle_algorithm: str,
        sealed_secrets: str | None = None,
    ) -> None:
        self._commit(seed, seed_commitment, shoe_prefix, sealed_secrets)
        self.variant, self.mode = variant, mode
        self.player_id, self.dealer_id, self.table_id = player_id, dealer_id, table_id
        self.decks, self.tie_pays = decks, tie_pays
        self.stake_min_cents, self.stake_max_cents = stake_min_cents, stake_max_cents
        self.commission_basis_points = commission_basis_points
        self.shuffle_algorithm = shuffle_algorithm
        self.status = OPEN
        self.bets: dict[str, int] = {}
        self.cards: dict[str, list[str]] = {baccarat.PLAYER: [], baccarat.BANKER: []}
        self.outcome: str | None = None
        self.payouts: list[dict[str, Any]] = []
        self.commission_cents = 0
        self.player_net_cents = 0
        self.void_reason: str | None = None

    @classmethod
    def open(
        cls,
        *,
        variant: str,
        mode: str,
        player_id: str,
        limits: tuple[int, int],
        decks: int,
        tie_pays: int,
        box: SecretBox,
        seed: str,
        shoe_prefix: list[str] | None = None,
        dealer_id: str | None = None,
        table_id: str | None = None,
        commission_basis_points: int = 0,
    ) -> BaccaratRound:
        return open_sealed(
            cls,
            box,
            seed,
            shoe_prefix,
            variant=variant,
            mode=mode,
            player_id=player_id,
            dealer_id=dealer_id,
            table_id=table_id,
            decks=decks,
            tie_pays=tie_pays,
            stake_min_cents=limits[0],
            stake_max_cents=limits[1],
            commission_basis_points=commission_basis_points,
        )

    # Read side.

    @property
    def total_stake_cents(self) -> int:
        return sum(self.bets.values())

    def nets(self) -> dict[str, int]:
        """What the settled round came to for each side, in cents: the player, and the
        dealer and the casino's commission (P2P) or the house (house game)."""
        if self.dealer_id is None:
            return {"player": self.player_net_cents, "casino": -self.player_net_cents}
        dealer = -self.player_net_cents - self.commission_cents
        return {"player": self.player_net_cents, "dealer": dealer, "casino": self.commission_cents}

    # Commands.

    def place_bet(self, spot: str, amount_cents: int) -> None:
        self._check_open()
        baccarat.check_spot(spot)
        baccarat.check_chips(amount_cents)
        total_after = self.total_stake_cents + amount_cents
        if total_after > self.stake_max_cents:
            raise AboveTableMaximum(
                f"the round's total stake would be {format_cents(total_after)}, "
                f"above the table maximum of {format_cents(self.stake_max_cents)}",
                maximum=format_cents(self.stake_max_cents),
                total_stake=format_cents(self.total_stake_cents),
            )
        self._bet_placed(spot, amount_cents, baccarat.chips_for(amount_cents))

    def remove_bet(self, spot: str) -> int:
        """Take a spot's whole stake back before the deal; return how much it was."""
        self._check_open()
        baccarat.check_spot(spot)
        amount = self.bets.get(spot, 0)
        if not amount:
            raise NoStakeOnSpot(f"there is no stake on {spot} to remove")
        self._bet_removed(spot, amount)
        return amount

    def deal(self) -> None:
        """Play the whole coup from the committed shoe, then settle every bet."""
        self._check_open()
        if not self.bets:
            raise NoBets("place at least one bet before the deal")
        if self.total_stake_cents < self.stake_min_cents:
            raise BelowTableMinimum(
                f"the round's total stake of {format_cents(self.total_stake_cents)} is below "
                f"the table minimum of {format_cents(self.stake_min_cents)}",
                minimum=format_cents(self.stake_min_cents),
            )
        coup = baccarat.play_coup(self.shoe())
        self._record_cards(coup)
        for spot, stake in sorted(self.bets.items()):
            net = baccarat.bet_net_cents(spot, stake, coup.outcome, self.tie_pays)
            self._payout_made(spot, stake, net)
        if self.variant == P2P:
            rate = self.commission_basis_points
            self._commission_charged(baccarat.commission_cents(self.total_stake_cents, rate))
        self._settled(coup.outcome, coup.player_total, coup.banker_total, *self.secrets())

    def void(self, reason: str) -> None:
        self._check_open()
        self._voided(reason, *self.secrets())

    def _record_cards(self, coup: baccarat.Coup) -> None:
        player, banker = coup.player_cards, coup.banker_cards
        for position, (hand, card) in enumerate(
            [
                (baccarat.PLAYER, player[0]),
                (baccarat.BANKER, banker[0]),
                (baccarat.PLAYER, player[1]),
                (baccarat.BANKER, banker[1]),
            ]
        ):
            self._card_dealt(hand, card, position)
        position = 4
        for hand, cards in ((baccarat.PLAYER, player), (baccarat.BANKER, banker)):
            if len(cards) == 3:
                self._third_card_drawn(hand, cards[2], position)
                position += 1

    def _check_open(self) -> None:
        if self.status != OPEN:
            raise RoundNotOpen(f"round {self.round_id} is {self.status}, not open for bets")

    # Events.

    @event("BetPlaced", topic=BET_PLACED)
    def _bet_placed(self, spot: str, amount_cents: int, chips: list[int]) -> None:
        self.bets[spot] = self.bets.get(spot, 0) + amount_cents

    @event("BetRemoved", topic=BET_REMOVED)
    def _bet_removed(self, spot: str, amount_cents: int) -> None:
        assert self.bets.pop(spot) == amount_cents

    @event("CardDealt", topic=CARD_DEALT)
    def _card_dealt(self, hand: str, card: str, position: int) -> None:
        self.cards[hand].append(card)

    @event("ThirdCardDrawn", topic=THIRD_CARD_DRAWN)
    def _third_card_drawn(self, hand: str, card: str, position: int) -> None:
        self.cards[hand].append(card)

    @event("PayoutMade", topic=PAYOUT_MADE)
    def _payout_made(self, spot: str, stake_cents: int, net_cents: int) -> None:
        self.payouts.append({"spot": spot, "stake_cents": stake_cents, "net_cents": net_cents})
        self.player_net_cents += net_cents

    @event("CommissionCharged", topic=COMMISSION_CHARGED)
    def _commission_charged(self, commission_cents: int) -> None:
        self.commission_cents = commission_cents

    @event("Settled", topic=SETTLED)
    def _settled(
        self,
        outcome: str,
        player_total: int,
        banker_total: int,
        seed: str,
        shoe_prefix: list[str] | None = None,
    ) -> None:
        self._reveal(seed, shoe_prefix)
        self.outcome = outcome
        self.status = SETTLED_STATUS

    @event("Voided", topic=VOIDED)
    def _voided(self, reason: str, seed: str, shoe_prefix: list[str] | None = None) -> None:
        self._reveal(seed, shoe_prefix)
        self.void_reason = reason
        self.status = VOIDED_STATUS


def load_baccarat_round(unit: Unit, round_id: str) -> BaccaratRound:
    round_ = load_round(unit, round_id)
    if not isinstance(round_, BaccaratRound):
        raise UnknownRound(f"round {round_id[:80]} is not a baccarat round")
    return round_
