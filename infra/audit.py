"""`casino audit verify` and `casino audit replay`: the auditor's view of the store."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from domain import audit
from domain import wallet as wallet_topics
from domain.baccarat_round import ROUND as BACCARAT_ROUND
from domain.blackjack_audit import verify_blackjack_round
from domain.blackjack_round import ROUND as BLACKJACK_ROUND
from infra.store import Store
from infra.views_rounds import FINISHED, SECRET_FIELDS
from projections import balances, event_chain

BATCH = 1000
VERIFIERS = {BACCARAT_ROUND: audit.verify_baccarat_round, BLACKJACK_ROUND: verify_blackjack_round}


@dataclass
class AuditReport:
    events: int = 0
    rounds: int = 0
    head_link: str = event_chain.GENESIS
    problems: list[str] = field(default_factory=list)


def notifications(store: Store, progress: Callable[[int], None]) -> Iterator[Any]:
    position = 0
    while batch := store.app.recorder.select_notifications(
        start=position, limit=BATCH, inclusive_of_start=False
    ):
        yield from batch
        position = batch[-1].id
        progress(len(batch))


def verify(store: Store, round_id: str | None, progress: Callable[[int], None]) -> AuditReport:
    store.projector.catch_up()  # Chains every event not chained yet.
    report = AuditReport()
    with store.database.read() as cursor:
        chained = event_chain.stored_links(cursor)
    streams: dict[str, list[Any]] = defaultdict(list)
    previous = event_chain.GENESIS
    for notification in notifications(store, progress):
        report.events += 1
        previous = event_chain.link(previous, notification)
        _check_link(report, chained.pop(notification.id, None), previous, notification)
        streams[str(notification.originator_id)].append(
            store.app.mapper.to_domain_event(notification)
        )
    report.head_link = previous
    report.problems += [
        f"event at position {position} ({aggregate} version {version}) has been removed"
        for position, (aggregate, version, _) in sorted(chained.items())
    ]
    report.problems += _check_versions(streams)
    report.problems += _check_books(store, streams)
    report.problems += _check_rounds(report, streams, round_id)
    return report


def _check_link(report: AuditReport, stored: Any, recomputed: str, notification: Any) -> None:
    if stored is not None and stored[2] != recomputed:
        report.problems.append(
            f"event at position {notification.id} ({notification.originator_id} version "
            f"{notification.originator_version}) differs from the chain: altered, reordered, "
            "or an earlier event was"
        )


def _check_versions(streams: dict[str, list[Any]]) -> list[str]:
    return [
        f"aggregate {aggregate_id} has versions {[e.originator_version for e in events][:10]}, "
        "not 1, 2, 3, ...: an event is missing"
        for aggregate_id, events in streams.items()
        if [e.originator_version for e in events] != list(range(1, len(events) + 1))
    ]


def _wallets(streams: dict[str, list[Any]]) -> dict[str, tuple[str, str]]:
    return {
        aggregate_id: (events[0].player_id, events[0].mode)
        for aggregate_id, events in streams.items()
        if wallet_topics.topic_of(events[0]) == wallet_topics.OPENED
    }


def _check_books(store: Store, streams: dict[str, list[Any]]) -> list[str]:
    modes = {wallet_id: mode for wallet_id, (_, mode) in _wallets(streams).items()}
    every_event = (event for events in streams.values() for event in events)
    books = audit.postings_per_mode(every_event, modes)
    problems = [
        f"the {mode} trial balance totals {sum(accounts.values())} cents, not 0"
        for mode, accounts in books.items()
        if sum(accounts.values()) != 0
    ]
    with store.database.read() as cursor:
        for mode, accounts in books.items():
            projected = dict(balances.trial_balance(cursor, mode))
            if projected != {a: c for a, c in accounts.items() if c or a in projected}:
                problems.append(f"the {mode} trial-balance read model disagrees with the events")
    return problems


def _check_rounds(
    report: AuditReport, streams: dict[str, list[Any]], only: str | None
) -> list[str]:
    entries = _wallet_entries_by_round(streams)
    problems: list[str] = []
    for aggregate_id, events in streams.items():
        verify_round = VERIFIERS.get(events[0].originator_topic)
        if verify_round is None:
            continue
        if only is not None and aggregate_id != only:
            continue
        report.rounds += 1
        problems += verify_round(events, entries.get(aggregate_id, []))
    if only is not None and report.rounds == 0:
        problems.append(f"no round {only} in the store")
    return problems


def _wallet_entries_by_round(streams: dict[str, list[Any]]) -> dict[str, list[audit.WalletEntry]]:
    owners = _wallets(streams)
    entries: dict[str, list[audit.WalletEntry]] = defaultdict(list)
    for wallet_id, (player_id, _) in owners.items():
        for event in streams[wallet_id]:
            round_id = getattr(event, "round_id", None)
            if round_id is not None:
                topic = wallet_topics.topic_of(event)
                entries[round_id].append(audit.WalletEntry(player_id, topic, event))
    return entries


def timeline(store: Store, round_id: str) -> list[str]:
    """One round, event by event, for a person to read."""
    round_ = store.app.round(round_id)
    lines = []
    events: list[Any] = list(store.app.events.get(round_.id))
    for event in events:
        data = {k: v for k, v in vars(event).items() if k not in _ENVELOPE}
        if getattr(round_, "status", None) not in FINISHED:
            for secret in SECRET_FIELDS:  # Revealed only once the round is over.
                data.pop(secret, None)
        kind = type(event).TOPIC.rsplit(".", 1)[-1]
        details = ", ".join(f"{k}={v}" for k, v in data.items())
        at = f"{event.timestamp:%Y-%m-%d %H:%M:%S.%f}"
        lines.append(f"{event.originator_version:>3}  {at}  {kind:<17} {details}")
    return lines


_ENVELOPE = ("originator_id", "originator_version", "timestamp", "originator_topic")
