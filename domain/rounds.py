"""What every round shares, whatever its game: its committed shoe, when its secrets
may be shown, how it is found by its public id, and how an auditor replays it.

A round's shoe is fixed before any bet by a seed (and, in certification mode, a
chosen prefix); the seed, the prefix and a blackjack hole card stay secret while
the round is not over (rules.md 5), and `secrets_revealed` is the one place
that says when that is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.cards import InvalidCard
from domain.errors import HistoryUnavailable, InvalidShoe, TestModeDisabled, UnknownRound
from domain.shoe import CardNotInShoe, committed_shoe
from domain.unit import Unit, parse_public_id

OVER = ("settled", "voided")  # the statuses of a round that is over, in every game
# Hidden while a round is not over: the seed and a chosen shoe reveal every card to come,
# and the blackjack hole card stays face down while the round is in play (rules.md 3, 5).
SECRET_FIELDS = ("seed", "shoe_prefix", "hole_card")
# A certification shoe longer than the largest shoe is refused before it is looked at.
SHOE_PREFIX_CARDS_MAX = 416


def secrets_revealed(status: str) -> bool:
    """A round's seed, certification shoe and hole card are shown once it is over."""
    return status in OVER


def withhold_secrets(data: dict[str, Any]) -> dict[str, Any]:
    """An event's fields with the secrets nulled, for a round not over yet."""
    return {k: (None if k in SECRET_FIELDS else v) for k, v in data.items()}


class _Committed(Protocol):
    @property
    def id(self) -> UUID: ...

    seed: str
    decks: int
    shoe_prefix: list[str]


class CommittedRound:
    """A mixin for round aggregates: their id as text, and the shoe their seed (and a
    certification prefix, if any) committed them to before any bet."""

    IS_ROUND = True  # Tells a round id from the id of another aggregate.

    @property
    def round_id(self: _Committed) -> str:
        return str(self.id)

    def shoe(self: _Committed) -> list[str]:
        """The whole shoe the round was committed to, re-derived from its seed."""
        return committed_shoe(self.seed, self.decks, self.shoe_prefix)

    def check_shoe(self: _Committed) -> None:
        """Refuse a certification shoe that the decks cannot hold (422 invalid_shoe)."""
        try:
            committed_shoe(self.seed, self.decks, self.shoe_prefix)
        except (InvalidCard, CardNotInShoe) as error:
            raise InvalidShoe(str(error)) from None


def check_certification(test_mode: bool, shoe_prefix: object) -> None:
    """A requested shoe is for certification only (api.md, Conventions)."""
    if shoe_prefix is None:
        return
    if not test_mode:
        raise TestModeDisabled("a shoe may only be chosen in certification mode")
    if not isinstance(shoe_prefix, list) or len(shoe_prefix) > SHOE_PREFIX_CARDS_MAX:
        raise InvalidShoe(f"shoe must be a list of at most {SHOE_PREFIX_CARDS_MAX} cards")
    if not all(isinstance(card, str) for card in shoe_prefix):
        raise InvalidShoe('every card of the shoe must be a string such as "10" or "QH"')


def load_round(unit: Unit, round_id: str) -> Aggregate:
    """A round of any game by its public id; which game it is, the caller matches."""

    def missing() -> UnknownRound:
        return UnknownRound(f"no round {round_id[:80]} exists")

    round_ = unit.get(Aggregate, parse_public_id(round_id, missing), missing)
    if not getattr(round_, "IS_ROUND", False):
        raise missing()
    return round_


@dataclass(frozen=True)
class WalletEntry:
    """A wallet event about a round, with whose wallet it is (what an auditor checks)."""

    player_id: str
    topic: str
    event: Any


def replay(events: Iterable[Any]) -> Any:
    """The aggregate its stored events make, as the library rebuilds it."""
    aggregate = None
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


def check_history_available(mode: str) -> None:
    """Game history is kept for real money only (rules.md 4, seed 000)."""
    if mode != "real":
        raise HistoryUnavailable("play-money rounds have no game history")
