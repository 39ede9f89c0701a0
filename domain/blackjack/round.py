"""The blackjack round aggregate (rules.md 3): up to five boxes against the house.

Every bet, card, decision, dealer draw and payout is its own event. The shoe is
fixed before any bet by the seed in the `Opened` event. Command methods take
the cards from the committed shoe at the next position and hand them to the
events; event bodies advance the play state with the pure functions of
`domain/blackjack/play.py`, which are deterministic, so a replay rebuilds the
same state. The hole card is stored face down, only its place in the shoe, and
turned over in the save that ends the round (`domain/blackjack/hole_card.py`).

A round in play whose player disconnects is `Interrupted` and held exactly as it
was until it is `Resumed`, or until the system finishes it with the house
defaults (rules.md 4): the player can do nothing to it meanwhile.
"""

from __future__ import annotations

import datetime
from typing import Any

from eventsourcing.domain import Aggregate, event

from domain.blackjack import hands, settlement
from domain.blackjack import play as rules
from domain.blackjack import state as play_state
from domain.blackjack.hole_card import awaits_hole_card, dealer_checks_blackjack
from domain.copying import FastCopy
from domain.errors import (
    IllegalAction,
    NoBets,
    NoStakeOnBox,
    RoundInterrupted,
    RoundNotOpen,
    UnknownRound,
)
from domain.rounds import CommittedRound, load_round, open_sealed
from domain.settings import BlackjackHall
from domain.unit import SecretBox, Unit

# Stable event topics: stored with every event, so they never change.
ROUND = "casino:BlackjackRound"
OPENED = "casino:BlackjackRound.Opened"
BET_PLACED = "casino:BlackjackRound.BetPlaced"
BET_REMOVED = "casino:BlackjackRound.BetRemoved"
CARD_DEALT = "casino:BlackjackRound.CardDealt"
HOLE_CARD_DEALT = "casino:BlackjackRound.HoleCardDealt"
HOLE_CARD_REVEALED = "casino:BlackjackRound.HoleCardRevealed"
PLAYER_ACTED = "casino:BlackjackRound.PlayerActed"
DEALER_DREW = "casino:BlackjackRound.DealerDrew"
PAYOUT_MADE = "casino:BlackjackRound.PayoutMade"
SETTLED = "casino:BlackjackRound.Settled"
VOIDED = "casino:BlackjackRound.Voided"
INTERRUPTED = "casino:BlackjackRound.Interrupted"
RESUMED = "casino:BlackjackRound.Resumed"
BONUS_SHARED = "casino:BlackjackRound.BonusShared"

OPEN, IN_PLAY, SETTLED_STATUS, VOIDED_STATUS = "open", "in_play", "settled", "voided"
INTERRUPTED_STATUS = "interrupted"  # in play, held while the player is away (rules.md 4)
# Who made a decision: the player, or the system finishing an abandoned round (rules.md 4).
BY_PLAYER, BY_SYSTEM = "player", "system"


class BlackjackRound(CommittedRound, FastCopy, Aggregate):
    TOPIC = ROUND

    class Created(Aggregate.Created):
        TOPIC = OPENED
        mode: str
        player_id: str
        hall: str
        stake_min_cents: int
        stake_max_cents: int
        decks: int
        seed: str | None  # null since seeds are sealed; in clear before
        seed_commitment: str
        shoe_prefix: list[str] | None
        shuffle_algorithm: str
        ruleset: str
        sealed_secrets: str | None  # the seed and the certification shoe, encrypted

        # Version 2 names the rules the round is played by; a round opened before
        # then was played by the first (insurance paid whatever the box did).
        class_version = 2

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["ruleset"] = "baden-baden@1"

    @event(Created)
    def __init__(
        self,
        mode: str,
        player_id: str,
        hall: str,
        stake_min_cents: int,
        stake_max_cents: int,
        decks: int,
        seed: str | None,
        seed_commitment: str,
        shoe_prefix: list[str] | None,
        shuffle_algorithm: str,
        ruleset: str,
        sealed_secrets: str | None = None,
    ) -> None:
        assert ruleset in settlement.RULESETS
        self._commit(seed, seed_commitment, shoe_prefix, sealed_secrets)
        self.mode, self.player_id, self.hall = mode, player_id, hall
        self.stake_min_cents, self.stake_max_cents = stake_min_cents, stake_max_cents
        self.decks = decks
        self.shuffle_algorithm = shuffle_algorithm
        self.ruleset = ruleset
        self.status = OPEN
        self.bets: dict[int, int] = {}  # box number -> stake; rounds are never snapshotted
        self.initial_cards: list[str] = []  # the deal so far, in shoe order
        self.shoe_position = 0  # index of the next card to take from the shoe
        self.hole_position: int | None = None  # where in the shoe the hole card lies
        self.play: play_state.PlayState | None = None  # from the hole card on
        self.added_stake_cents = 0  # doubles, splits and insurance, held on top of the bets
        self.payouts: list[dict[str, Any]] = []
        self.player_net_cents = 0
        self.interruption_reason: str | None = None  # while interrupted

    @classmethod
    def open(
        cls,
        *,
        mode: str,
        player_id: str,
        hall: BlackjackHall,
        decks: int,
        box: SecretBox,
        seed: str,
        shoe_prefix: list[str] | None = None,
    ) -> BlackjackRound:
        return open_sealed(
            cls,
            box,
            seed,
            shoe_prefix,
            mode=mode,
            player_id=player_id,
            hall=hall.name,
            stake_min_cents=hall.stake_min_cents,
            stake_max_cents=hall.stake_max_cents,
            decks=decks,
            ruleset=settlement.RULESET.name,
        )

    # Read side.

    @property
    def total_bet_cents(self) -> int:
        return sum(self.bets.values())

    @property
    def limits(self) -> tuple[int, int]:
        """The hall's limits on one box's stake, in cents: (minimum, maximum)."""
        return self.stake_min_cents, self.stake_max_cents

    @property
    def held_cents(self) -> int:
        """What the round holds of the player's money: bets, doubles, splits, insurance."""
        return self.total_bet_cents + self.added_stake_cents

    @property
    def state(self) -> play_state.PlayState:
        assert self.play is not None, "the round has not been dealt"
        return self.play

    def next_turn(self) -> play_state.Turn | None:
        return rules.next_turn(self.play) if self.play is not None else None

    @property
    def interrupted_at(self) -> datetime.datetime | None:
        """When the round was interrupted, or None: nothing happens to an interrupted
        round until it resumes or is finished, so its interruption is its last event."""
        return self.modified_on if self.status == INTERRUPTED_STATUS else None

    # Commands: each validates, then triggers its events.

    def place_bet(self, box: int, amount_cents: int) -> None:
        self.check_open()
        hands.check_bet(box, amount_cents, self.bets.get(box, 0), self.limits)
        self._bet_placed(box, amount_cents)

    def remove_bet(self, box: int) -> int:
        """Take a box's whole stake back before the deal; return how much it was."""
        self.check_open()
        hands.validate_box_number(box)
        amount = self.bets.get(box, 0)
        if not amount:
            raise NoStakeOnBox(f"there is no stake on box {box} to remove")
        self._bet_removed(box, amount)
        return amount

    def deal(self) -> None:
        """Deal the first two cards of every box and the dealer; play on if nobody acts."""
        self.check_open()
        if not self.bets:
            raise NoBets("place at least one bet before the deal")
        slots = rules.deal_order(list(self.bets))
        cards = self._next_cards(len(slots))
        for slot, card in zip(slots[:-1], cards[:-1], strict=True):
            box = None if slot.box_number == play_state.DEALER else slot.box_number
            self._card_dealt(box, card, slot.shoe_index)
        self._hole_card_dealt(None, slots[-1].shoe_index)  # face down, in the store too
        if dealer_checks_blackjack(self.state, cards[-1]):
            self._turn_hole_card()
        self._play_on()

    def decide(self, box: int, hand: int, action: str, by: str = BY_PLAYER) -> play_state.Decision:
        """Decide an action once: refuse it unless the rules allow it now, and say what
        it holds on top of the bets and which cards it takes. `act` then records it."""
        assert by in (BY_PLAYER, BY_SYSTEM), by
        if by == BY_PLAYER:
            self._check_not_interrupted()
        if self.play is None:
            raise IllegalAction("the cards have not been dealt yet: place bets and deal first")
        rules.check_action(self.play, box, hand, action)
        added = rules.stake_added(self.play, box, hand, action)
        cards = self._next_cards(rules.cards_needed(action))
        return play_state.Decision(box, hand, action, cards, added, by)

    def act(self, decision: play_state.Decision) -> None:
        """Record a decided action; after the last one the dealer plays and pays."""
        self._player_acted(
            decision.box,
            decision.hand,
            decision.action,
            decision.cards,
            self.shoe_position,
            decision.added_stake_cents,
            decision.by,
        )
        self._play_on()

    def void(self, reason: str) -> None:
        """End a round never dealt: its stakes go back (rules.md 4, idle timeout)."""
        self.check_open()
        self._voided(reason, *self.secrets())

    def interrupt(self, reason: str) -> None:
        """Hold the round exactly as it is while its player is away (rules.md 4)."""
        assert self.status == IN_PLAY, self.status
        self._interrupted(reason)

    def resume(self) -> None:
        """The player is back: play goes on where it stopped."""
        assert self.status == INTERRUPTED_STATUS, self.status
        self._resumed()

    def play_box(self, box: int) -> play_state.Box:
        return next(entry for entry in self.state["boxes"] if entry["box_number"] == box)

    def _play_on(self) -> None:
        """Once the players are done: the dealer draws, then every box is paid."""
        while self.state["phase"] == play_state.PHASE_DEALER:
            if awaits_hole_card(self.state):
                self._turn_hole_card()
            else:
                self._dealer_drew(self._next_cards(1)[0], self.shoe_position)
        if self.state["phase"] == play_state.PHASE_OVER:
            self._settle()

    def _turn_hole_card(self) -> None:
        """The hole card, from the unsealed shoe, turned over in the save that ends the round."""
        assert self.hole_position is not None, "turned over after the deal"
        self._hole_card_revealed(self.shoe()[self.hole_position], self.hole_position)

    def _settle(self) -> None:
        settled = settlement.settle_round(self.state, settlement.RULESETS[self.ruleset])
        for box in settled["boxes"]:
            hands = [dict(hand) for hand in box["hands"]]
            self._payout_made(
                box["box_number"], hands, box["insurance_net_cents"], box["net_cents"]
            )
        dealer_cards = list(self.state["dealer_cards"])
        self._settled(settled["total_net_cents"], dealer_cards, *self.secrets())

    def _next_cards(self, count: int) -> list[str]:
        cards = self.shoe()[self.shoe_position : self.shoe_position + count]
        assert len(cards) == count, "two decks always hold enough cards for one round"
        return cards

    def check_open(self) -> None:
        """Bets change only before the deal."""
        self._check_not_interrupted()
        if self.status != OPEN:
            raise RoundNotOpen(f"round {self.round_id} is {self.status}, not open for bets")

    def _check_not_interrupted(self) -> None:
        if self.status == INTERRUPTED_STATUS:
            raise RoundInterrupted(
                f"round {self.round_id} is interrupted ({self.interruption_reason}): nothing "
                f"can change until player {self.player_id} reconnects",
                round_id=self.round_id,
            )

    # Events: the bodies re-run on every replay, so they only check and assign.

    @event("BetPlaced", topic=BET_PLACED)
    def _bet_placed(self, box: int, amount_cents: int) -> None:
        self.bets[box] = self.bets.get(box, 0) + amount_cents

    @event("BetRemoved", topic=BET_REMOVED)
    def _bet_removed(self, box: int, amount_cents: int) -> None:
        assert self.bets.pop(box) == amount_cents

    @event("CardDealt", topic=CARD_DEALT)
    def _card_dealt(self, box: int | None, card: str, position: int) -> None:
        # box None is the dealer's up card.
        self._take(position, 1)
        self.initial_cards.append(card)

    @event("HoleCardDealt", topic=HOLE_CARD_DEALT)
    def _hole_card_dealt(self, hole_card: str | None, position: int) -> None:
        # The deal's last card: play starts. Null (face down) unless dealt before rules.md 5(c).
        self._take(position, 1)
        self.hole_position = position
        if hole_card is not None:
            self.initial_cards.append(hole_card)
        self.play = rules.start_play(self.bets, self.initial_cards)
        self.status = IN_PLAY

    @event("HoleCardRevealed", topic=HOLE_CARD_REVEALED)
    def _hole_card_revealed(self, hole_card: str, position: int) -> None:
        # Pair assertion: the card turned over lies where the hole card was dealt.
        assert position == self.hole_position, (position, self.hole_position)
        self.play = rules.turn_hole_card(self.state, hole_card)

    @event("PlayerActed", topic=PLAYER_ACTED)
    def _player_acted(
        self,
        box: int,
        hand: int,
        action: str,
        cards: list[str],
        position: int,
        added_stake_cents: int,
        by: str,
    ) -> None:
        # Pair assertion: only the system decides for a player who is away.
        assert self.status != INTERRUPTED_STATUS or by == BY_SYSTEM, by
        self._take(position, len(cards))
        self.play = rules.apply_action(self.state, box, hand, action, cards)
        self.added_stake_cents += added_stake_cents

    @event("DealerDrew", topic=DEALER_DREW)
    def _dealer_drew(self, card: str, position: int) -> None:
        self._take(position, 1)
        self.play = rules.deal_dealer_card(self.state, card)

    @event("PayoutMade", topic=PAYOUT_MADE)
    def _payout_made(
        self, box: int, hands: list[dict[str, Any]], insurance_net_cents: int, net_cents: int
    ) -> None:
        payout = {"box": box, "hands": hands, "insurance_net_cents": insurance_net_cents}
        self.payouts.append({**payout, "net_cents": net_cents})
        self.player_net_cents += net_cents

    @event("Settled", topic=SETTLED)
    def _settled(
        self,
        total_net_cents: int,
        dealer_cards: list[str],
        seed: str,
        shoe_prefix: list[str] | None = None,
    ) -> None:
        assert total_net_cents == self.player_net_cents, "the payouts add up to the result"
        self._reveal(seed, shoe_prefix)
        self.status = SETTLED_STATUS

    @event("Voided", topic=VOIDED)
    def _voided(self, reason: str, seed: str, shoe_prefix: list[str] | None = None) -> None:
        self._reveal(seed, shoe_prefix)
        self.status = VOIDED_STATUS

    @event("BonusShared", topic=BONUS_SHARED)
    def _bonus_shared(self, player_id: str, net_cash_cents: int, net_bonus_cents: int) -> None:
        self._share_bonus(player_id, net_cash_cents, net_bonus_cents)

    @event("Interrupted", topic=INTERRUPTED)
    def _interrupted(self, reason: str) -> None:
        assert self.status == IN_PLAY, self.status
        self.status = INTERRUPTED_STATUS
        self.interruption_reason = reason

    @event("Resumed", topic=RESUMED)
    def _resumed(self) -> None:
        assert self.status == INTERRUPTED_STATUS, self.status
        self.status = IN_PLAY
        self.interruption_reason = None

    def _take(self, position: int, count: int) -> None:
        """Pair assertion: cards leave the shoe in order, none skipped, none twice."""
        assert position == self.shoe_position, (position, self.shoe_position)
        self.shoe_position += count


def load_blackjack_round(unit: Unit, round_id: str) -> BlackjackRound:
    round_ = load_round(unit, round_id)
    if not isinstance(round_, BlackjackRound):
        raise UnknownRound(f"round {round_id[:80]} is not a blackjack round")
    return round_
