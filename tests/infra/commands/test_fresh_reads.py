"""The queries' repository (infra/commands/fresh_reads.py): what it keeps is brought up to date
on every read with the events after it, copied, never changed in place; one kept too
far behind loads from its snapshot instead."""

from __future__ import annotations

from typing import Any

from domain.application import CasinoApplication
from infra.commands import with_commands
from infra.commands.fresh_reads import EVENTS_AFTER_KEPT_MAX


def counting_events_read(app: CasinoApplication) -> list[int]:
    """Every event query's length, from now on."""
    lengths: list[int] = []
    get = app.events.get

    def counted(*args: Any, **kwargs: Any) -> Any:
        events = list(get(*args, **kwargs))
        lengths.append(len(events))
        return iter(events)

    app.events.get = counted  # type: ignore[method-assign]
    return lengths


def test_an_unchanged_kept_aggregate_costs_one_empty_query() -> None:
    app = with_commands()
    app.register_player("alice", "Alice")
    app.deposit("alice", "real", 500)
    kept = app.wallet("alice", "real")
    lengths = counting_events_read(app)
    assert app.wallet("alice", "real") is kept
    assert lengths == [0]


def test_a_read_after_a_deposit_applies_it_to_a_copy() -> None:
    app = with_commands()
    app.register_player("alice", "Alice")
    earlier = app.wallet("alice", "real")
    app.deposit("alice", "real", 500)
    lengths = counting_events_read(app)
    later = app.wallet("alice", "real")
    assert (earlier.balance_cents, later.balance_cents) == (0, 500)
    assert lengths == [1]


def test_one_kept_far_behind_loads_from_its_snapshot() -> None:
    app = with_commands()
    app.register_player("alice", "Alice")
    app.wallet("alice", "real")
    for _ in range(450):  # the wallet's snapshots: every 200 events
        app.deposit("alice", "real", 1)
    lengths = counting_events_read(app)
    assert app.wallet("alice", "real").balance_cents == 450
    assert lengths[0] == EVENTS_AFTER_KEPT_MAX  # only a look: too far behind
    assert sum(lengths[1:]) < 200  # then the events after the latest snapshot
