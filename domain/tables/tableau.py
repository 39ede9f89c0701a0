"""The shape of a table game's rules (rules.md 2.2-2.4), as plain values and pure
functions: its seats, the spots a bet names, the order the first cards are dealt,
its tableau, which says at every moment what happens next in a coup, and what a
bet wins once the coup is over.

A tableau looks at the cards each hand holds, the choices made so far and the
stakes on each spot, and answers one step: draw a card to a hand, ask someone to
choose, or the coup is over. The coup aggregate plays a coup by asking it again
and again, so a game with choices (chemin de fer, en banque) and one without
(punto banco) play on the same ground.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from domain.errors import AboveTableMaximum, BelowTableMinimum, UnknownSeat, UnknownSpot
from domain.money import format_cents

DRAW, STAND = "draw", "stand"
CHOICE_ACTIONS = (DRAW, STAND)


@dataclass(frozen=True)
class Draw:
    """Deal the next card of the shoe to this hand."""

    hand: str


@dataclass(frozen=True)
class Choice:
    """Whoever plays `chooser` chooses among `actions` for `hand`; the system, not in
    time or for someone away, chooses `default`."""

    hand: str
    chooser: str
    actions: tuple[str, ...]
    default: str


@dataclass(frozen=True)
class Over:
    outcome: str  # a headline: the winning hand, "tie", or each side's result


Step = Draw | Choice | Over
Hands = Mapping[str, Sequence[str]]
# (the cards of each hand, the choices made so far by hand, the stakes by spot) -> step
Tableau = Callable[[Hands, Mapping[str, str], Mapping[str, int]], Step]
# What a bet on a spot wins (+), loses (-stake) or pushes (0), from the final totals.
BetNet = Callable[[str, int, Mapping[str, int], int], int]
# Who plays each hand whose choices someone owes, from the bets (player -> spot ->
# cents), the players in play order and the banker: chooser -> player id.
Choosers = Callable[[Mapping[str, Mapping[str, int]], Sequence[str], str | None], dict[str, str]]


def nobody_chooses(
    bets: Mapping[str, Mapping[str, int]], order: Sequence[str], banker: str | None
) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class TableGameRules:
    name: str
    seats: tuple[str, ...]  # in play order
    spots: tuple[str, ...]
    deal_order: tuple[str, ...]  # the first cards: which hand each goes to
    tableau: Tableau
    bet_net: BetNet
    choosers: Choosers = nobody_chooses
    player_banked: bool = False  # a seated player holds the bank, not the house
    # The casino's commission is its rate of every stake, recorded even when it is
    # nothing (P2P, rules.md 2.1), not of a bank's winnings (rules.md 2.3, 2.4).
    commission_on_stakes: bool = False
    # The banker's dealer points go down by the stakes against them (P2P, rules.md 2.1).
    dealer_points: bool = False

    def check_seat(self, seat: str) -> None:
        if seat not in self.seats:
            raise UnknownSeat(
                f"{seat[:20]!r} is no seat at a {self.name} table: "
                f"the seats are {', '.join(self.seats)}"
            )

    def check_spot(self, spot: str) -> None:
        if spot not in self.spots:
            raise UnknownSpot(
                f"{spot[:40]!r} is not a spot at a {self.name} table: "
                f"bet on {', '.join(self.spots)}"
            )

    def check_stake(
        self, player_id: str, total_cents: int, stake_cents: int, limits: tuple[int, int]
    ) -> None:
        """As a bet or a removal comes: at a table, each player's stake is within the limits."""
        check_player_total(player_id, total_cents, stake_cents, limits)

    def check_deal(self, total_cents: int, limits: tuple[int, int]) -> None:
        """At the deal: nothing more at a table, where every stake was checked as it came."""


@dataclass(frozen=True)
class OneSeatRules(TableGameRules):
    """A round of one player (the house's single-player round, a P2P round, rules.md
    2.1-2.2): the limits are the round's total stake's, the maximum checked as each
    bet comes, the minimum at the deal, so chips can be added in any order."""

    def check_spot(self, spot: str) -> None:
        if spot not in self.spots:
            named = f"{', '.join(self.spots[:-1])} or {self.spots[-1]}"
            raise UnknownSpot(f"{spot[:40]!r} is not a spot: bet on {named}")

    def check_stake(
        self, player_id: str, total_cents: int, stake_cents: int, limits: tuple[int, int]
    ) -> None:
        if total_cents > limits[1]:
            raise above_maximum("the round's total stake", total_cents, stake_cents, limits[1])

    def check_deal(self, total_cents: int, limits: tuple[int, int]) -> None:
        minimum = limits[0]
        if total_cents < minimum:
            raise BelowTableMinimum(
                f"the round's total stake of {format_cents(total_cents)} is below "
                f"the table minimum of {format_cents(minimum)}",
                minimum=format_cents(minimum),
            )


def highest_stake(
    bets: Mapping[str, Mapping[str, int]], order: Sequence[str], spot: str
) -> str | None:
    """Who has the highest stake on a spot; on equal stakes, the first in play order."""
    staked = [(-spots[spot], order.index(who), who) for who, spots in bets.items()
              if spots.get(spot) and who in order]  # fmt: skip
    return min(staked)[2] if staked else None


def check_player_total(
    player_id: str, total_cents: int, stake_cents: int, limits: tuple[int, int]
) -> None:
    """Limits apply to each player's total stake in a coup (rules.md 2.2), which is
    always 0 or within them: `total_cents` is what a bet or removal would leave."""
    minimum, maximum = limits
    if total_cents > maximum:
        raise above_maximum(f"{player_id}'s stake in this coup", total_cents, stake_cents, maximum)
    if total_cents < minimum:
        raise BelowTableMinimum(
            f"{player_id}'s stake in this coup would be {format_cents(total_cents)}, "
            f"below the table minimum of {format_cents(minimum)}",
            minimum=format_cents(minimum),
        )


def above_maximum(
    whose: str, total_cents: int, stake_cents: int, maximum: int
) -> AboveTableMaximum:
    """The refusal of a stake that would pass the table maximum: `whose` stake it is."""
    return AboveTableMaximum(
        f"{whose} would be {format_cents(total_cents)}, "
        f"above the table maximum of {format_cents(maximum)}",
        maximum=format_cents(maximum),
        total_stake=format_cents(stake_cents),
    )
