"""What every round shares, whatever its game: its committed shoe, when its secrets
may be shown, how it is found by its public id, and how an auditor replays it.

A round's shoe is fixed before any bet by a seed (and, in certification mode, a
chosen prefix); the seed, the prefix and a blackjack hole card stay secret while
the round is not over (rules.md 5), and `secrets_revealed` is the one place
that says when that is. (A hole card is stored face down, `domain/blackjack/hole_card.py`;
rounds dealt before carry it in clear, withheld as `hole_card`.)

Anyone who can read the database must not learn the cards to come, so the seed and
the prefix are stored sealed: the `Opened` event carries them encrypted by the
application's `SecretBox` (`sealed_secrets`, bound to the public commitment) and
`seed` and `shoe_prefix` null; a round loaded for a command opens them in memory
(`CommittedRound.unseal`); the event that ends the round (`Settled`, `Voided`)
carries both in clear. Rounds opened before this carry them in clear in `Opened`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.cards import InvalidCard
from domain.errors import (
    HistoryUnavailable,
    InvalidShoe,
    SeedNotSealed,
    TestModeDisabled,
    UnknownRound,
)
from domain.shoe import SHUFFLE_ALGORITHM, CardNotInShoe, commitment, committed_shoe
from domain.unit import SecretBox, Unit, parse_public_id

OVER = ("settled", "voided")  # the statuses of a round that is over, in every game
# Hidden while a round is not over: the seed and a chosen shoe reveal every card to come,
# and the blackjack hole card stays face down while the round is in play (rules.md 3, 5).
# The sealed form of the seed and shoe too: of no use without the key, but nothing of a
# round not over leaves the service, not even encrypted.
SECRET_FIELDS = ("seed", "shoe_prefix", "hole_card", "sealed_secrets")
# A certification shoe longer than the largest shoe is refused before it is looked at.
SHOE_PREFIX_CARDS_MAX = 416


def secrets_revealed(status: str) -> bool:
    """A round's seed, certification shoe and hole card are shown once it is over."""
    return status in OVER


def with_revealed_secrets(data: dict[str, Any], round_: Any) -> dict[str, Any]:
    """An event's fields for a round over: its opening shows the seed and the shoe its
    end revealed, as it did before they were sealed (stored there as `sealed_secrets`),
    and a blackjack hole card dealt face down shows the card at its place in that shoe."""
    if data.get("sealed_secrets") is not None and data.get("seed") is None:
        data = {**data, "seed": round_.seed, "shoe_prefix": round_.shoe_prefix}
    if "hole_card" in data and data["hole_card"] is None:
        data = {**data, "hole_card": round_.shoe()[data["position"]]}
    return data


def withhold_secrets(data: dict[str, Any]) -> dict[str, Any]:
    """An event's fields with the secrets nulled, for a round not over yet."""
    return {k: (None if k in SECRET_FIELDS else v) for k, v in data.items()}


class _Committed(Protocol):
    @property
    def id(self) -> UUID: ...

    seed: str | None
    seed_commitment: str
    decks: int
    shoe_prefix: list[str] | None
    sealed_secrets: str | None


R = TypeVar("R")


def open_sealed(
    create: Callable[..., R], box: SecretBox, seed: str, shoe_prefix: list[str] | None, **terms: Any
) -> R:
    """A new round made by `create` from its terms, its `Opened` event carrying the
    commitment and the seed and certification shoe sealed; the round itself keeps
    them in clear, in memory only, for the command that opened it."""
    prefix = list(shoe_prefix or [])
    seed_commitment = commitment(seed)
    secrets = json.dumps({"seed": seed, "shoe_prefix": prefix}).encode()
    round_: Any = create(
        **terms,
        seed=None,
        seed_commitment=seed_commitment,
        shoe_prefix=None,
        sealed_secrets=box.seal(secrets, seed_commitment),
        shuffle_algorithm=SHUFFLE_ALGORITHM,
    )
    round_.seed, round_.shoe_prefix = seed, prefix
    return round_  # type: ignore[no-any-return]


class CommittedRound:
    """A mixin for round aggregates: their id as text, and the shoe their seed (and a
    certification prefix, if any) committed them to before any bet."""

    IS_ROUND = True  # Tells a round id from the id of another aggregate.

    @property
    def round_id(self: _Committed) -> str:
        return str(self.id)

    def record_bonus_share(self, player_id: str, net_cash_cents: int, net_bonus_cents: int) -> None:
        """What a player's result was in cash and in bonus money (rules.md 9), as their
        wallet settled it: recorded (each round's `BonusShared`) only where bonus money
        was staked."""
        self._bonus_shared(player_id, net_cash_cents, net_bonus_cents)  # type: ignore[attr-defined]

    @property
    def bonus_nets(self) -> dict[str, list[int]]:
        """Player id -> [net cash, net bonus], where bonus money was staked (rules.md 9);
        none in rounds without (those stored before bonus money among them)."""
        found: dict[str, list[int]] = self.__dict__.get("_bonus_nets", {})
        return found

    def _share_bonus(self, player_id: str, net_cash_cents: int, net_bonus_cents: int) -> None:
        """In the `BonusShared` event's body."""
        self._bonus_nets = {**self.bonus_nets, player_id: [net_cash_cents, net_bonus_cents]}

    def _commit(
        self,
        seed: str | None,
        seed_commitment: str,
        shoe_prefix: list[str] | None,
        sealed_secrets: str | None,
    ) -> None:
        """In the `Opened` event's body: a seed in clear (rounds opened before seeds were
        sealed) or sealed, never both."""
        assert (seed is None) != (sealed_secrets is None)
        assert seed is None or commitment(seed) == seed_commitment
        self.seed: str | None = seed
        self.seed_commitment = seed_commitment
        self.shoe_prefix: list[str] | None = shoe_prefix
        self.sealed_secrets = sealed_secrets

    def _reveal(self, seed: str, shoe_prefix: list[str] | None) -> None:
        """In the body of the event that ends the round: its secrets, now in clear (the
        audit checks the seed against the commitment, `seed_problems`)."""
        self.seed = seed
        if shoe_prefix is not None:  # Rounds ended before seeds were sealed: in `Opened`.
            self.shoe_prefix = shoe_prefix

    def unseal(self: _Committed, box: SecretBox) -> None:
        """Open the sealed seed and certification shoe in memory, for a command that
        deals; nothing is stored. A round over, or already open in memory, is left as it
        is. A round not over whose seed is stored in clear, opened once the store
        sealed its log, is refused: seeds were sealed by then, so one in clear was
        written behind the service's back (a seed the insider chose would deal the
        cards they chose)."""
        over = getattr(self, "status", None) in OVER
        if self.sealed_secrets is None and not over and not box.clear_allowed(self.id):
            raise SeedNotSealed(
                f"round {self.id}: its seed is stored in clear while the round is "
                "not over, not sealed as the service stores seeds: the log was changed "
                "behind the service's back (run `casino audit verify`); nothing was played"
            )
        if self.seed is None and self.sealed_secrets is not None:
            secrets = json.loads(box.open(self.sealed_secrets, self.seed_commitment))
            assert commitment(secrets["seed"]) == self.seed_commitment
            self.seed, self.shoe_prefix = secrets["seed"], secrets["shoe_prefix"]

    def secrets(self: _Committed) -> tuple[str, list[str]]:
        """The seed and the certification shoe in clear: to deal, and to reveal them."""
        assert self.seed is not None and self.shoe_prefix is not None, "unsealed before play"
        return self.seed, self.shoe_prefix

    def shoe(self: _Committed) -> list[str]:
        """The whole shoe the round was committed to, re-derived from its seed."""
        seed, prefix = CommittedRound.secrets(self)
        return committed_shoe(seed, self.decks, prefix)

    def check_shoe(self: _Committed) -> None:
        """Refuse a certification shoe that the decks cannot hold (422 invalid_shoe)."""
        try:
            CommittedRound.shoe(self)
        except (InvalidCard, CardNotInShoe) as error:
            raise InvalidShoe(str(error)) from None


def seed_problems(name: str, round_: Any) -> list[str]:
    """An auditor's first check of a round that is over: its revealed seed is the one
    its commitment was published for."""
    if round_.seed is None or commitment(round_.seed) != round_.seed_commitment:
        return [f"{name}: the revealed seed does not match the published commitment"]
    return []


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
