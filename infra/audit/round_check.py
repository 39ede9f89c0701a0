"""Every round re-derived from its events (`casino audit verify`, rules.md 5): once it
is over and its wallets' entries are in, its cards, outcome, payouts, commission,
what each wallet posted and the dealer points (domain/*/audit.py).

It holds the events of the rounds not over yet, never the whole log: a finished
round is checked, then forgotten. A later event of a forgotten round then shows as
one that does not start at version 1 (VersionCheck).

It knows the position of every event it holds (`open_positions`): what an
incremental verify reads again to take up the rounds still open where the last
verify stopped (infra/audit/resume.py).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain import wallet as wallet_topics
from domain.blackjack import round as blackjack_topics
from domain.blackjack.audit import verify_blackjack_round
from domain.providers import round as provider_topics
from domain.providers.audit import verify_provider_round
from domain.rounds import WalletEntry
from domain.tables import coup as coup_topics
from domain.tables import old_rounds
from domain.tables.audit import verify_coup
from infra.audit.chain_check import Problems, VersionCheck
from projections.round_trail import ENDED

VERIFIERS = {
    old_rounds.ROUND: verify_coup,  # house and P2P rounds stored before they were coups
    blackjack_topics.ROUND: verify_blackjack_round,
    coup_topics.ROUND: verify_coup,
    provider_topics.ROUND: verify_provider_round,
}
# A round's wallet entries are saved in the save that ends it, or before. No save
# holds this many events, so once the log is this far past a round's last event the
# round has every entry it will get, and is checked and forgotten.
SAVE_EVENTS_MAX = 10_000


@dataclass
class RoundResults:
    """What the round checks found: how many rounds were checked, and the problems."""

    checked: int = 0
    found: Problems = field(default_factory=lambda: Problems("rounds"))

    def problems(self) -> list[str]:
        return self.found.all()


class RoundCheck:
    """Each round's events and its wallets' entries, until it is over and checked.
    `wallets` is the owner of each wallet opened so far (book_check.py), filled as
    the pass goes; `versions`, whose rounds are forgotten once checked."""

    def __init__(
        self,
        only: str | None,
        versions: VersionCheck,
        wallets: Mapping[Any, tuple[str, str]],
    ) -> None:
        self.only = only
        self.versions = versions
        self.wallets = wallets
        self.results = RoundResults()
        self.events: dict[Any, list[tuple[int, Any]]] = {}  # by aggregate id
        self.entries: dict[str, list[tuple[int, WalletEntry]]] = defaultdict(list)
        self.ended: deque[tuple[int, Any]] = deque()

    def add(self, position: int, event: Any) -> None:
        while self.ended and self.ended[0][0] < position - SAVE_EVENTS_MAX:
            self._check(self.ended.popleft()[1])
        aggregate = event.originator_id
        owner = self.wallets.get(aggregate)
        round_id = getattr(event, "round_id", None)
        if round_id is not None and not isinstance(round_id, str):
            round_id = repr(round_id)  # tampered (a list, say): named as an orphan, no crash
        if owner is not None and round_id is not None and self.only in (None, round_id):
            topic = wallet_topics.topic_of(event)
            self.entries[round_id].append((position, WalletEntry(owner[0], topic, event)))
        elif getattr(event, "originator_topic", None) in VERIFIERS:
            self.events[aggregate] = [(position, event)]  # Opened: a new round.
        elif aggregate in self.events:
            self.events[aggregate].append((position, event))
            if wallet_topics.topic_of(event) in ENDED or _ended_by_provider(event):
                self.ended.append((position, aggregate))

    def open_positions(self) -> list[int]:
        """The positions of the events of the rounds not over, and of the wallets'
        entries for them, in log order: what a verify taking up from here reads
        again. (A round over has every entry it will get once its save is in: it is
        checked to the end of this pass, as it would be later.)"""
        over = {aggregate for _, aggregate in self.ended}
        held = [p for id, events in self.events.items() if id not in over for p, _ in events]
        over_ids = {str(aggregate) for aggregate in over}
        held += [
            p
            for round_id, entries in self.entries.items()
            if round_id not in over_ids
            for p, _ in entries
        ]
        return sorted(held)

    def _check(self, aggregate: Any, over: bool = True) -> None:
        held = self.events.pop(aggregate, None)
        if held is None:
            return  # Ended twice (a tampered log): checked already.
        round_id = str(aggregate)
        self.versions.forget(round_id)
        entries = [entry for _, entry in self.entries.pop(round_id, [])]
        if self.only not in (None, round_id):
            return
        self.results.checked += 1
        events = [event for _, event in held]
        try:
            problems = VERIFIERS[events[0].originator_topic](events, entries)
        except Exception as error:  # A tampered round may not even replay.
            problems = [f"round {round_id}: its events do not replay: {error!r}"]
        if problems and not over:  # The details could show cards still face down.
            problems = [
                f"round {round_id} (not over yet): {len(problems)} discrepancies in its cards "
                "or money; the details are withheld until it is over"
            ]
        for problem in problems:
            self.results.found.add(problem)

    def finish(self) -> RoundResults:
        ended = {aggregate for _, aggregate in self.ended}
        for aggregate in list(self.events):
            self._check(aggregate, over=aggregate in ended)
        for round_id, entries in self.entries.items():
            for _, entry in entries:
                self.results.found.add(
                    f"{entry.player_id}'s wallet posted {entry.topic.rsplit('.', 1)[-1]} "
                    f"(version {entry.event.originator_version}) for round {round_id}, which "
                    "is not in the store, or was over long before",
                )
        return self.results


def _ended_by_provider(event: Any) -> bool:
    """A provider's round its provider ended takes nothing more: checked like any round
    over. One ended for want of calls may still take a win: checked at the pass's end."""
    topic = wallet_topics.topic_of(event)
    return topic == provider_topics.ENDED and event.reason == provider_topics.BY_PROVIDER
