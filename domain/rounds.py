"""What every round aggregate shares, whatever its game."""

from __future__ import annotations

from typing import Protocol
from uuid import UUID

from domain.settings import check_shoe_prefix
from domain.shoe import committed_shoe


class _Committed(Protocol):
    @property
    def id(self) -> UUID: ...

    seed: str
    decks: int
    shoe_prefix: list[str]


class CommittedRound:
    """A mixin for round aggregates: their id as text, and the shoe their seed (and a
    certification prefix, if any) committed them to before any bet."""

    IS_ROUND = True  # Lets the seam tell a round id from the id of another aggregate.

    @property
    def round_id(self: _Committed) -> str:
        return str(self.id)

    def shoe(self: _Committed) -> list[str]:
        """The whole shoe the round was committed to, re-derived from its seed."""
        return committed_shoe(self.seed, self.decks, self.shoe_prefix)

    def check_shoe(self: _Committed) -> None:
        check_shoe_prefix(self.shoe_prefix, self.seed, self.decks)
