"""Every round re-derived from its events (`casino audit verify`, rules.md 5): once it
is over and its wallets' entries are in, its cards, outcome, payouts, commission,
what each wallet posted and the dealer points (domain/*/audit.py).

It holds the events of the rounds not over yet, never the whole log: a finished
round is checked, then forgotten. A later event of a forgotten round then shows as
one that does not start at version 1 (VersionCheck).
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from domain import wallet as wallet_topics
from domain.baccarat import round as baccarat_topics
from domain.baccarat.audit import verify_baccarat_round
from domain.blackjack import round as blackjack_topics
from domain.blackjack.audit import verify_blackjack_round
from domain.rounds import WalletEntry
from domain.tables import coup as coup_topics
from domain.tables.audit import verify_coup
from infra.audit.book_check import BookCheck
from infra.audit.chain_check import Problems, VersionCheck
from projections.round_trail import ENDED

VERIFIERS = {
    baccarat_topics.ROUND: verify_baccarat_round,
    blackjack_topics.ROUND: verify_blackjack_round,
    coup_topics.ROUND: verify_coup,
}
# A round's wallet entries are saved in the save that ends it, or before. No save
# holds this many events, so once the log is this far past a round's last event the
# round has every entry it will get, and is checked and forgotten.
SAVE_EVENTS_MAX = 10_000


class RoundCheck:
    """Each round's events and its wallets' entries, until it is over and checked."""

    def __init__(self, only: str | None, versions: VersionCheck, books: BookCheck) -> None:
        self.only = only
        self.versions = versions
        self.wallets = books.wallets
        self.problems = Problems("rounds")
        self.checked = 0
        self.events: dict[Any, list[Any]] = {}  # by aggregate id
        self.entries: dict[str, list[WalletEntry]] = defaultdict(list)
        self.ended: deque[tuple[int, Any]] = deque()

    def add(self, position: int, event: Any) -> None:
        while self.ended and self.ended[0][0] < position - SAVE_EVENTS_MAX:
            self._check(self.ended.popleft()[1])
        aggregate = event.originator_id
        owner = self.wallets.get(aggregate)
        round_id = getattr(event, "round_id", None)
        if owner is not None and round_id is not None and self.only in (None, round_id):
            topic = wallet_topics.topic_of(event)
            self.entries[round_id].append(WalletEntry(owner[0], topic, event))
        elif getattr(event, "originator_topic", None) in VERIFIERS:
            self.events[aggregate] = [event]  # Opened: a new round.
        elif aggregate in self.events:
            self.events[aggregate].append(event)
            if wallet_topics.topic_of(event) in ENDED:
                self.ended.append((position, aggregate))

    def _check(self, aggregate: Any, over: bool = True) -> None:
        events = self.events.pop(aggregate, None)
        if events is None:
            return  # Ended twice (a tampered log): checked already.
        round_id = str(aggregate)
        self.versions.forget(round_id)
        entries = self.entries.pop(round_id, [])
        if self.only not in (None, round_id):
            return
        self.checked += 1
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
            self.problems.add(problem)

    def finish(self) -> None:
        ended = {aggregate for _, aggregate in self.ended}
        for aggregate in list(self.events):
            self._check(aggregate, over=aggregate in ended)
        for round_id, entries in self.entries.items():
            for entry in entries:
                self.problems.add(
                    f"{entry.player_id}'s wallet posted {entry.topic.rsplit('.', 1)[-1]} "
                    f"(version {entry.event.originator_version}) for round {round_id}, which "
                    "is not in the store, or was over long before"
                )
