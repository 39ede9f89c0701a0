"""Every round re-derived from its events (`casino audit verify`, rules.md 5): once it
is over and its wallets' entries are in, its cards, outcome, payouts, commission,
what each wallet posted and the dealer points (domain/*/audit.py).

It holds the events of the rounds not over yet, never the whole log: a finished
round is checked, then forgotten. A later event of a forgotten round then shows as
one that does not start at version 1 (VersionCheck).

The checks can be shared out between two processes that read the same log
(infra/audit/aside_process.py): each keeps every round's events as the pass goes
(so both forget alike, and check the rounds in the same order) but re-derives only
the rounds of its `Share`. Each problem carries its round's place in that order, so
the two lists merge into the one a single process makes.
"""

from __future__ import annotations

import zlib
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain import wallet as wallet_topics
from domain.baccarat import round as baccarat_topics
from domain.baccarat.audit import verify_baccarat_round
from domain.blackjack import round as blackjack_topics
from domain.blackjack.audit import verify_blackjack_round
from domain.rounds import WalletEntry
from domain.tables import coup as coup_topics
from domain.tables.audit import verify_coup
from infra.audit.chain_check import PROBLEMS_LISTED_MAX, Problems, VersionCheck
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


@dataclass(frozen=True)
class Share:
    """The rounds one process re-derives: those whose id's CRC-32 modulo `of` is in
    `parts`. CRC-32, not `hash`: two processes must agree, and str hashes are salted
    per process."""

    parts: frozenset[int]
    of: int

    def mine(self, round_id: str) -> bool:
        # surrogatepass: a tampered id may hold a lone surrogate, which still has bytes.
        spelt = round_id.encode("utf-8", "surrogatepass")
        return self.of == 1 or zlib.crc32(spelt) % self.of in self.parts

    def rest(self) -> Share:
        """The other process's share: every round not in this one."""
        return Share(frozenset(range(self.of)) - self.parts, self.of)


EVERY_ROUND = Share(frozenset({0}), 1)


@dataclass
class RoundResults:
    """What one process's round checks found: how many it checked, and its problems,
    each with the moment of the pass it was found at (the how-many-th round checked,
    or round of entries reported: both processes count alike); the first
    PROBLEMS_LISTED_MAX, and a count of the rest. Plain values: it goes from one
    process to the other."""

    checked: int = 0
    listed: list[tuple[int, str]] = field(default_factory=list)
    unlisted: int = 0

    def add(self, moment: int, problem: str) -> None:
        if len(self.listed) < PROBLEMS_LISTED_MAX:
            self.listed.append((moment, problem))
        else:
            self.unlisted += 1

    def merged(self, other: RoundResults) -> RoundResults:
        """Both, in the order one process checking every round finds them: each
        process lists its first problems, so the first of both are among them. (A
        moment is one round's, checked by one process: its problems keep their order.)"""
        both = sorted(self.listed + other.listed, key=lambda found: found[0])  # stable
        return RoundResults(
            self.checked + other.checked,
            both[:PROBLEMS_LISTED_MAX],
            self.unlisted + other.unlisted + max(0, len(both) - PROBLEMS_LISTED_MAX),
        )

    def problems(self) -> list[str]:
        found = Problems("rounds")
        for _, problem in self.listed:
            found.add(problem)
        found.unlisted += self.unlisted
        return found.all()


class RoundCheck:
    """Each round's events and its wallets' entries, until it is over and checked.
    `wallets` is the owner of each wallet opened so far (book_check.py), filled as
    the pass goes; `versions`, whose rounds are forgotten once checked (none in a
    process that checks no versions). Entries for a round never seen are reported
    by the process with `orphans`: verify's own, which has no re-deriving to do for
    them."""

    def __init__(
        self,
        only: str | None,
        versions: VersionCheck | None,
        wallets: Mapping[Any, tuple[str, str]],
        share: Share = EVERY_ROUND,
        orphans: bool = True,
    ) -> None:
        self.only = only
        self.versions = versions
        self.wallets = wallets
        self.share = share
        self.orphans = orphans
        self.results = RoundResults()
        self.left = 0  # rounds of the other share
        self.moment = 0  # rounds checked or left so far, then rounds of orphan entries
        self.events: dict[Any, list[Any]] = {}  # by aggregate id
        self.entries: dict[str, list[WalletEntry]] = defaultdict(list)
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
        if self.versions is not None:
            self.versions.forget(round_id)
        entries = self.entries.pop(round_id, [])
        if self.only not in (None, round_id):
            return
        self.moment += 1
        if not self.share.mine(round_id):
            self.left += 1
            return
        self.results.checked += 1
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
            self.results.add(self.moment, problem)

    def finish(self) -> RoundResults:
        ended = {aggregate for _, aggregate in self.ended}
        for aggregate in list(self.events):
            self._check(aggregate, over=aggregate in ended)
        for round_id, entries in self.entries.items() if self.orphans else ():
            self.moment += 1
            for entry in entries:
                self.results.add(
                    self.moment,
                    f"{entry.player_id}'s wallet posted {entry.topic.rsplit('.', 1)[-1]} "
                    f"(version {entry.event.originator_version}) for round {round_id}, which "
                    "is not in the store, or was over long before",
                )
        return self.results
