"""A coup at a multi-player table (rules.md 2.2-2.4): a baccarat round in which many
players bet, each on their own wallet, and which may wait for a choice owed by a
named participant.

Every bet, card, choice owed and made, and payout is its own event. The shoe is
fixed before any bet by the seed in the `Opened` event. The coup is played by its
game's tableau (`domain/tables/games.py`), asked step after step in the command
method; the event bodies only assign, so a replay needs no rules at all.
"""

from __future__ import annotations

import datetime
from typing import Any

from eventsourcing.domain import Aggregate, event

from domain.baccarat.rules import check_chips, chips_for
from domain.baccarat.rules import commission_cents as stakes_commission_cents
from domain.copying import FastCopy
from domain.errors import (
    BancoCalled,
    IllegalAction,
    NoBets,
    NoStakeOnSpot,
    NotYourDecision,
    RoundNotOpen,
    UnknownRound,
)
from domain.rounds import CommittedRound, load_round, open_sealed
from domain.tables import bank
from domain.tables.coup_figures import SETTLED_STATUS as SETTLED_STATUS
from domain.tables.coup_figures import CoupFigures
from domain.tables.tableau import Choice, Draw, Over, TableGameRules
from domain.unit import SecretBox, Unit

# Stable event topics: stored with every event, so they never change.
ROUND = "casino:Coup"
OPENED = "casino:Coup.Opened"
SETTLED = "casino:Coup.Settled"
VOIDED = "casino:Coup.Voided"
BET_PLACED = "casino:Coup.BetPlaced"
DECISION_OWED = "casino:Coup.DecisionOwed"
DECISION_MADE = "casino:Coup.DecisionMade"
BANCO_CALLED = "casino:Coup.BancoCalled"
UNCOVERED_BET_RETURNED = "casino:Coup.UncoveredBetReturned"
PAYOUT_MADE = "casino:Coup.PayoutMade"
COMMISSION_CHARGED = "casino:Coup.CommissionCharged"
BONUS_SHARED = "casino:Coup.BonusShared"

OPEN, IN_PLAY, VOIDED_STATUS = "open", "in_play", "voided"
BY_PLAYER, BY_SYSTEM = "player", "system"
CHOICES_MAX = 8  # no tableau asks more of one coup: a bug past it, not a long game


class Coup(CoupFigures, CommittedRound, FastCopy, Aggregate):
    TOPIC = ROUND

    class Created(Aggregate.Created):
        TOPIC = OPENED
        table_id: str | None  # None: a house round, a one-seat table of its own
        variant: str
        mode: str
        decks: int
        tie_pays: int
        bet_min_cents: int
        bet_max_cents: int
        banker_id: str | None
        bank_cents: int
        commission_basis_points: int
        seed: str | None  # null since seeds are sealed; in clear before
        seed_commitment: str
        shoe_prefix: list[str] | None
        shuffle_algorithm: str
        sealed_secrets: str | None  # the seed and the certification shoe, encrypted
        player_id: str | None  # the one seat's player (house, P2P); None at a table of many

    @event(Created)
    def __init__(
        self,
        table_id: str | None,
        variant: str,
        mode: str,
        decks: int,
        tie_pays: int,
        bet_min_cents: int,
        bet_max_cents: int,
        banker_id: str | None,
        bank_cents: int,
        commission_basis_points: int,
        seed: str | None,
        seed_commitment: str,
        shoe_prefix: list[str] | None,
        shuffle_algorithm: str,
        sealed_secrets: str | None = None,
        player_id: str | None = None,  # absent from the coups of tables of many
    ) -> None:
        self._commit(seed, seed_commitment, shoe_prefix, sealed_secrets)
        self.table_id, self.variant, self.mode = table_id, variant, mode
        self.player_id = player_id
        self.decks, self.tie_pays = decks, tie_pays
        self.bet_min_cents, self.bet_max_cents = bet_min_cents, bet_max_cents
        # A player-banked coup: whose bank is at stake, whole, and the casino's rate on it.
        self.banker_id, self.bank_cents = banker_id, bank_cents
        self.commission_basis_points = commission_basis_points
        self.shuffle_algorithm = shuffle_algorithm
        self.status = OPEN
        self.bets: dict[str, dict[str, int]] = {}  # player id -> spot -> cents
        self.hands: dict[str, list[str]] = {}
        self.shoe_position = 0
        self.playing: dict[str, str] = {}  # who plays a hand's choices: chooser -> player id
        self.play_order: list[str] = []  # the seated players at the deal, in play order
        self.decisions: list[dict[str, Any]] = []
        self.pending: dict[str, Any] | None = None  # the choice owed now, if any
        self.payouts: list[dict[str, Any]] = []
        self.banco: dict[str, Any] | None = None  # {player_id, spot, suivi}
        # What the bank did not cover at the deal, given back (rules.md 2.3):
        # {player_id, spot, amount_cents, covered_cents}.
        self.returned: list[dict[str, Any]] = []
        self.commission_cents = 0
        self.bank_after_cents = bank_cents
        self.outcome: str | None = None
        self.void_reason: str | None = None

    @classmethod
    def open(
        cls,
        *,
        limits: tuple[int, int],
        box: SecretBox,
        seed: str,
        shoe_prefix: list[str] | None,
        **terms: Any,
    ) -> Coup:
        """A coup on the table's terms (table_id, variant, mode, decks, tie_pays, banker_id,
        bank_cents, commission_basis_points, and at a one-seat table its player_id), its
        shoe fixed by `seed`, sealed by `box`."""
        return open_sealed(
            cls, box, seed, shoe_prefix, bet_min_cents=limits[0], bet_max_cents=limits[1], **terms
        )

    @property
    def one_seat(self) -> bool:
        """A round of one player: the house's single-player round, or a P2P round."""
        return self.player_id is not None

    @property
    def table(self) -> str:
        """The id of the table of many players this coup is played at."""
        assert self.table_id is not None, "a house round has no table"
        return self.table_id

    # Commands: each validates, then triggers its events.

    def place_bet(
        self,
        rules: TableGameRules,
        player_id: str,
        spot: str,
        amount_cents: int,
        seat: str | None = None,
    ) -> None:
        """A bet by the player sitting at `seat` (where the seat matters: en banque)."""
        self._check_open()
        rules.check_spot(spot)
        check_chips(amount_cents)
        stake = self.stake_of(player_id) + amount_cents
        if rules.player_banked:
            assert self.banker_id is not None
            bank.check_bet(self.variant, self.banker_id, player_id, seat, spot, amount_cents)
            bank.check_cover(self.variant, stake, amount_cents, self.bank_cents,
                             self.total_stake_cents)  # fmt: skip
        rules.check_stake(player_id, stake, self.stake_of(player_id), self._limits())
        self._bet_placed(player_id, spot, amount_cents, chips_for(amount_cents))

    def call_banco(
        self, player_id: str, spot: str, suivi: str | None, failed: int
    ) -> list[tuple[str, str, int]]:
        """The caller covers the whole bank alone; every other bet (theirs too) goes back.
        Returns the bets returned: (player, spot, cents)."""
        self._check_open()
        assert self.banker_id is not None, "a banco is called against a player's bank"
        called_by = self.banco["player_id"] if self.banco is not None else None
        bank.check_banco(self.variant, player_id, self.banker_id, called_by, suivi, failed)
        returned = [(who, where, cents) for who, spots in sorted(self.bets.items())
                    for where, cents in sorted(spots.items())]  # fmt: skip
        for who, where, cents in returned:
            self._bet_removed(who, where, cents)
        self._banco_called(player_id, spot, self.bank_cents, player_id == suivi)
        return returned

    def remove_bet(self, rules: TableGameRules, player_id: str, spot: str) -> int:
        """Take one player's stake on a spot back before the deal; return how much."""
        self._check_removable(player_id)
        rules.check_spot(spot)
        amount = self.bets.get(player_id, {}).get(spot, 0)
        if not amount:
            raise NoStakeOnSpot(f"{player_id} has no stake on {spot[:40]} to remove")
        left = self.stake_of(player_id) - amount
        if left:
            rules.check_stake(player_id, left, self.stake_of(player_id), self._limits())
        self._bet_removed(player_id, spot, amount)
        return amount

    def cancel_bets(self, player_id: str) -> int:
        """Take every stake of one player back before the deal; return how much. Each
        goes at once, so no step between is judged against the table's minimum."""
        self._check_removable(player_id)
        spots = sorted(self.bets.get(player_id, {}).items())
        if not spots:
            raise NoBets(f"{player_id} has no bets in this coup to cancel")
        for spot, cents in spots:
            self._bet_removed(player_id, spot, cents)
        return sum(cents for _, cents in spots)

    def deal(
        self, rules: TableGameRules, order: list[str], absent: set[str], deadline: str
    ) -> list[tuple[str, str, int]]:
        """Deal the first cards, then play on until the coup is over or a choice is owed.
        First the bank covers the bets in play order, and what it does not cover goes
        back; who plays each hand then follows from the bets that stand and the play
        order, both recorded. Returns the bets given back: (player, spot, cents)."""
        self._check_open()
        if not self.bets:
            raise NoBets("place at least one bet before the deal")
        rules.check_deal(self.total_stake_cents, self._limits())
        returned = self._cover(order) if rules.player_banked else []
        playing = rules.choosers(self.bets, order, self.banker_id)
        if playing:
            self._players_chosen(playing, order)
        stakes = self.spot_stakes()
        for hand in rules.deal_order:
            self._card_dealt(hand, self._next_card(), self.shoe_position)
        self._play_on(rules, absent, deadline, stakes)
        return returned

    def choose(
        self,
        rules: TableGameRules,
        player_id: str,
        action: str,
        now: datetime.datetime,
        absent: set[str],
        deadline: str,
    ) -> None:
        """The choice owed by `player_id`, made by them before its deadline."""
        pending = self._pending()
        if pending["player_id"] != player_id:
            raise NotYourDecision(
                f"{player_id} owes no choice in this coup: {pending['player_id']} chooses "
                f"for the {pending['hand']} hand",
                owed_by=pending["player_id"],
            )
        if now >= datetime.datetime.fromisoformat(pending["deadline"]):
            raise IllegalAction(
                f"the time to choose ran out at {pending['deadline']}: the system makes "
                "the choice, as the rules say",
                deadline=pending["deadline"],
            )
        if action not in pending["actions"]:
            raise IllegalAction(
                f"{action[:20]!r} is not offered: choose one of {', '.join(pending['actions'])}"
            )
        self._decision_made(pending["hand"], action, player_id, BY_PLAYER)
        self._play_on(rules, absent, deadline, self.spot_stakes())

    def choose_by_system(self, rules: TableGameRules, absent: set[str], deadline: str) -> None:
        """The choice owed, made by the system as the rules say (rules.md 2.3, 4)."""
        pending = self._pending()
        self._decision_made(pending["hand"], pending["default"], pending["player_id"], BY_SYSTEM)
        self._play_on(rules, absent, deadline, self.spot_stakes())

    def void(self, reason: str) -> None:
        """End a coup never dealt: every stake goes back (rules.md 4, idle timeout)."""
        self._check_open()
        self._voided(reason, *self.secrets())

    def _play_on(
        self, rules: TableGameRules, absent: set[str], deadline: str, stakes: dict[str, int]
    ) -> None:
        for _ in range(CHOICES_MAX):
            step = rules.tableau(self.hands, self.choices(), stakes)
            while isinstance(step, Draw):
                self._third_card_drawn(step.hand, self._next_card(), self.shoe_position)
                step = rules.tableau(self.hands, self.choices(), stakes)
            if isinstance(step, Over):
                self._settle(rules, step)
                return
            assert isinstance(step, Choice)
            chooser = self.playing.get(step.chooser)
            if chooser is not None and chooser not in absent:
                self._decision_owed(chooser, step.hand, list(step.actions), step.default, deadline)
                return
            self._decision_made(step.hand, step.default, chooser, BY_SYSTEM)
        raise AssertionError("a coup asked for more choices than any tableau has")

    def _cover(self, order: list[str]) -> list[tuple[str, str, int]]:
        """The bank covers the bets seat by seat in play order (rules.md 2.3); each bet, or
        the part of it, it no longer covers is returned, recorded with both amounts."""
        parts = bank.uncovered_parts(self.bets, order, self.bank_cents)
        for player_id, spot, cents, covered in parts:
            self._uncovered_bet_returned(player_id, spot, cents, covered)
        return [(player_id, spot, cents) for player_id, spot, cents, _ in parts]

    def _settle(self, rules: TableGameRules, over: Over) -> None:
        totals = self.totals()
        for player_id, spots in sorted(self.bets.items()):
            for spot, stake in sorted(spots.items()):
                net = rules.bet_net(spot, stake, totals, self.tie_pays)
                self._payout_made(player_id, spot, stake, net)
        bank_after = 0
        if self.banker_id is not None:
            banker_net = self.banker_net_cents()
            commission = self.commission_due(rules)
            if commission or rules.commission_on_stakes:  # P2P: recorded even when nothing
                self._commission_charged(commission)
            bank_after = self.bank_cents + banker_net - commission if rules.player_banked else 0
        seed, shoe_prefix = self.secrets()
        self._settled(over.outcome, totals, seed, bank_after, shoe_prefix)

    def _next_card(self) -> str:
        return self.shoe()[self.shoe_position]

    def _pending(self) -> dict[str, Any]:
        if self.status != IN_PLAY or self.pending is None:
            raise IllegalAction(f"no choice is owed in coup {self.round_id} ({self.status})")
        return self.pending

    def _check_open(self) -> None:
        if self.status != OPEN:
            raise RoundNotOpen(f"coup {self.round_id} is {self.status}, not open for bets")

    def _check_removable(self, player_id: str) -> None:
        """A banco binds (rules.md 2.3): called, it stands until the coup is over."""
        self._check_open()
        if self.banco is not None and self.banco["player_id"] == player_id:
            raise BancoCalled(f"{player_id} called banco: it stands until the coup is over")

    def _limits(self) -> tuple[int, int]:
        return self.bet_min_cents, self.bet_max_cents

    def commission_due(self, rules: TableGameRules) -> int:
        """The casino's commission on a settled coup: at a P2P table its rate of every
        stake (rules.md 2.1), at a player's bank its rate of the bank's winnings (2.3)."""
        if rules.commission_on_stakes:
            return stakes_commission_cents(self.total_stake_cents, self.commission_basis_points)
        return bank.commission_cents(self.banker_net_cents(), self.commission_basis_points)

    # Events: the bodies re-run on every replay, so they only check and assign.

    @event("BetPlaced", topic=BET_PLACED)
    def _bet_placed(self, player_id: str, spot: str, amount_cents: int, chips: list[int]) -> None:
        spots = self.bets.setdefault(player_id, {})
        spots[spot] = spots.get(spot, 0) + amount_cents

    @event("BetRemoved", topic="casino:Coup.BetRemoved")
    def _bet_removed(self, player_id: str, spot: str, amount_cents: int) -> None:
        assert self.bets[player_id].pop(spot) == amount_cents
        if not self.bets[player_id]:
            del self.bets[player_id]

    @event("UncoveredBetReturned", topic=UNCOVERED_BET_RETURNED)
    def _uncovered_bet_returned(
        self, player_id: str, spot: str, amount_cents: int, covered_cents: int
    ) -> None:
        spots = self.bets[player_id]
        assert spots[spot] == amount_cents + covered_cents, (spots[spot], amount_cents)
        if covered_cents:
            spots[spot] = covered_cents
        else:
            del spots[spot]
        if not spots:
            del self.bets[player_id]
        returned = {"player_id": player_id, "spot": spot, "amount_cents": amount_cents}
        self.returned.append({**returned, "covered_cents": covered_cents})

    @event("PlayersChosen", topic="casino:Coup.PlayersChosen")
    def _players_chosen(self, playing: dict[str, str], order: list[str] | None = None) -> None:
        self.playing = dict(playing)
        self.play_order = list(order or [])  # None in coups stored before it was recorded

    @event("CardDealt", topic="casino:Coup.CardDealt")
    def _card_dealt(self, hand: str, card: str, position: int) -> None:
        self._take(hand, card, position)
        self.status = IN_PLAY

    @event("ThirdCardDrawn", topic="casino:Coup.ThirdCardDrawn")
    def _third_card_drawn(self, hand: str, card: str, position: int) -> None:
        self._take(hand, card, position)

    @event("DecisionOwed", topic=DECISION_OWED)
    def _decision_owed(
        self, player_id: str, hand: str, actions: list[str], default: str, deadline: str
    ) -> None:
        self.pending = {"player_id": player_id, "hand": hand, "actions": actions,
                        "default": default, "deadline": deadline}  # fmt: skip

    @event("DecisionMade", topic=DECISION_MADE)
    def _decision_made(self, hand: str, action: str, player_id: str | None, by: str) -> None:
        self.decisions.append({"hand": hand, "action": action, "player_id": player_id, "by": by})
        self.pending = None

    @event("PayoutMade", topic=PAYOUT_MADE)
    def _payout_made(self, player_id: str, spot: str, stake_cents: int, net_cents: int) -> None:
        payout = {"player_id": player_id, "spot": spot, "stake_cents": stake_cents}
        self.payouts.append({**payout, "net_cents": net_cents})

    @event("BancoCalled", topic=BANCO_CALLED)
    def _banco_called(self, player_id: str, spot: str, amount_cents: int, suivi: bool) -> None:
        self.banco = {"player_id": player_id, "spot": spot, "suivi": suivi}
        self.bets[player_id] = {spot: amount_cents}

    @event("CommissionCharged", topic=COMMISSION_CHARGED)
    def _commission_charged(self, commission_cents: int) -> None:
        self.commission_cents = commission_cents

    @event("Settled", topic=SETTLED)
    def _settled(
        self,
        outcome: str,
        totals: dict[str, int],
        seed: str,
        bank_after_cents: int,
        shoe_prefix: list[str] | None = None,
    ) -> None:
        self._reveal(seed, shoe_prefix)
        self.outcome = outcome
        self.bank_after_cents = bank_after_cents
        self.status = SETTLED_STATUS

    @event("Voided", topic=VOIDED)
    def _voided(self, reason: str, seed: str, shoe_prefix: list[str] | None = None) -> None:
        self._reveal(seed, shoe_prefix)
        self.void_reason = reason
        self.status = VOIDED_STATUS

    @event("BonusShared", topic=BONUS_SHARED)
    def _bonus_shared(self, player_id: str, net_cash_cents: int, net_bonus_cents: int) -> None:
        self._share_bonus(player_id, net_cash_cents, net_bonus_cents)

    def _take(self, hand: str, card: str, position: int) -> None:
        """Pair assertion: cards leave the shoe in order, none skipped, none twice."""
        assert position == self.shoe_position, (position, self.shoe_position)
        self.hands.setdefault(hand, []).append(card)
        self.shoe_position += 1


def load_coup(unit: Unit, round_id: str) -> Coup:
    round_ = load_round(unit, round_id)
    if not isinstance(round_, Coup):
        raise UnknownRound(f"round {round_id[:80]} is not a table coup")
    return round_


# The rounds stored before baccarat was one model load as coups (a frozen loader): their
# topics are registered wherever a coup can be read.
from domain.tables import old_rounds as old_rounds  # noqa: E402
