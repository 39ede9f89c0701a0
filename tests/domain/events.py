"""Given / when / then for aggregates: the events a command emits are the durable
contract (they are stored forever), so tests assert those, not only the state.

    wallet = given(Wallet("alice", "real"), lambda w: w.deposit("t1", 1_000))
    wallet.withdraw("t2", 400)                                # when
    assert then(wallet) == [("Withdrawn", {...})]             # then
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from eventsourcing.domain import Aggregate

A = TypeVar("A", bound=Aggregate)
ENVELOPE = ("originator_id", "originator_version", "timestamp", "originator_topic")


def given(aggregate: A, *commands: Callable[[A], object]) -> A:
    """The aggregate after these commands, their events taken as already stored."""
    for command in commands:
        command(aggregate)
    aggregate.collect_events()
    return aggregate


def then(aggregate: Aggregate) -> list[tuple[str, dict[str, Any]]]:
    """The events emitted since `given` (or the last `then`): type and fields, in order."""
    return [(type(event).__name__, fields(event)) for event in aggregate.collect_events()]


def kinds(aggregate: Aggregate) -> list[str]:
    """Only the types of the events emitted since, in order."""
    return [kind for kind, _ in then(aggregate)]


def fields(event: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(event).items() if k not in ENVELOPE}
