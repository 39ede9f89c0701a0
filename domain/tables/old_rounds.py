"""Rounds stored before baccarat was one model: a frozen loader.

House punto banco and P2P rounds were once their own aggregate, `casino:BaccaratRound`,
whose events are in every store written before. They are coups now (a one-seat table
the house banks; a P2P table whose dealer banks). These classes read those events as
they were written, under their own topics, and apply each to the coup it is: the
audit trail shows them as stored, the audit replays them, and a round left open then
is dealt by today's coup. Nothing writes them any more; they never change.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate
from eventsourcing.utils import register_topic

from domain.tables.coup import IN_PLAY, SETTLED_STATUS, VOIDED_STATUS, Coup

# Stable event topics: stored with every event, so they never change.
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


class Opened(Aggregate.Created):
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
    seed: str | None
    seed_commitment: str
    shoe_prefix: list[str] | None
    shuffle_algorithm: str
    sealed_secrets: str | None  # absent from rounds opened before seeds were sealed

    def mutate(self, aggregate: Any) -> Any:
        """The coup this round is: its one seat the player's, its banker the dealer (or
        the house), its limits the round's total stake's."""
        old = vars(self)
        created = object.__new__(Coup.Created)
        terms = {
            "originator_id": self.originator_id,
            "originator_version": self.originator_version,
            "timestamp": self.timestamp,
            "originator_topic": Coup.TOPIC,
            "table_id": old["table_id"],
            "variant": old["variant"],
            "mode": old["mode"],
            "decks": old["decks"],
            "tie_pays": old["tie_pays"],
            "bet_min_cents": old["stake_min_cents"],
            "bet_max_cents": old["stake_max_cents"],
            "banker_id": old["dealer_id"],
            "bank_cents": 0,
            "commission_basis_points": old["commission_basis_points"],
            "seed": old["seed"],
            "seed_commitment": old["seed_commitment"],
            "shoe_prefix": old["shoe_prefix"],
            "shuffle_algorithm": old["shuffle_algorithm"],
            "sealed_secrets": old.get("sealed_secrets"),
            "player_id": old["player_id"],
        }
        object.__setattr__(created, "__dict__", terms)
        coup = created.mutate(None)
        assert isinstance(coup, Coup)
        return coup


class BetPlaced(Aggregate.Event):
    TOPIC = BET_PLACED
    spot: str
    amount_cents: int
    chips: list[int]

    def apply(self, aggregate: Any) -> None:
        spots = aggregate.bets.setdefault(aggregate.player_id, {})
        spots[self.spot] = spots.get(self.spot, 0) + self.amount_cents


class BetRemoved(Aggregate.Event):
    TOPIC = BET_REMOVED
    spot: str
    amount_cents: int

    def apply(self, aggregate: Any) -> None:
        spots = aggregate.bets[aggregate.player_id]
        assert spots.pop(self.spot) == self.amount_cents
        if not spots:
            del aggregate.bets[aggregate.player_id]


class ThirdCardDrawn(Aggregate.Event):
    TOPIC = THIRD_CARD_DRAWN
    hand: str
    card: str
    position: int

    def apply(self, aggregate: Any) -> None:
        aggregate._take(self.hand, self.card, self.position)


class CardDealt(ThirdCardDrawn):  # the same fields: a card to a hand, from the shoe
    TOPIC = CARD_DEALT

    def apply(self, aggregate: Any) -> None:
        super().apply(aggregate)
        aggregate.status = IN_PLAY


class PayoutMade(Aggregate.Event):
    TOPIC = PAYOUT_MADE
    spot: str
    stake_cents: int
    net_cents: int

    def apply(self, aggregate: Any) -> None:
        aggregate.payouts.append(
            {
                "player_id": aggregate.player_id,
                "spot": self.spot,
                "stake_cents": self.stake_cents,
                "net_cents": self.net_cents,
            }
        )


class CommissionCharged(Aggregate.Event):
    TOPIC = COMMISSION_CHARGED
    commission_cents: int

    def apply(self, aggregate: Any) -> None:
        aggregate.commission_cents = self.commission_cents


class Settled(Aggregate.Event):
    TOPIC = SETTLED
    outcome: str
    player_total: int
    banker_total: int
    seed: str
    shoe_prefix: list[str] | None  # absent from rounds ended before seeds were sealed

    def apply(self, aggregate: Any) -> None:
        aggregate._reveal(self.seed, vars(self).get("shoe_prefix"))
        aggregate.outcome = self.outcome
        aggregate.bank_after_cents = 0
        aggregate.status = SETTLED_STATUS


class Voided(Aggregate.Event):
    TOPIC = VOIDED
    reason: str
    seed: str
    shoe_prefix: list[str] | None

    def apply(self, aggregate: Any) -> None:
        aggregate._reveal(self.seed, vars(self).get("shoe_prefix"))
        aggregate.void_reason = self.reason
        aggregate.status = VOIDED_STATUS


EVENTS = (Opened, BetPlaced, BetRemoved, CardDealt, ThirdCardDrawn, PayoutMade,
          CommissionCharged, Settled, Voided)  # fmt: skip
register_topic(ROUND, Coup)
for _event in EVENTS:
    register_topic(_event.TOPIC, _event)
