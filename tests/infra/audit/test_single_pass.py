"""`casino audit verify` reads each event once: every check, and the rebuild of the
read models it compares with, are fed from that one pass."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from domain.wallet import DEPOSITED
from infra.audit import pages, rebuild
from infra.audit.rebuild import Aside
from infra.audit.verify import verify
from infra.store.store import Store
from tests.infra.audit.test_verify import Attacker, named, play_some_rounds, problems_of


def _count_reads(store: Store, monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """How often each position is read from the log: through the audit tools' reader
    (infra/audit/pages.py), and on SQLite through the projector's reader, on PostgreSQL
    through the recorder (which the projector's reader calls)."""
    read: Counter[int] = Counter()
    read_log = pages.read_log

    def counted_here(*args: Any) -> list[Any]:
        batch = read_log(*args)
        read.update(event.id for event in batch)
        return batch

    monkeypatch.setattr(pages, "read_log", counted_here)
    monkeypatch.setattr(rebuild, "read_log", counted_here)
    if store.database.dialect == "sqlite":
        reader = store.projector.read_notifications

        def counted(cursor: Any, start: int, limit: int, stop: int | None) -> Sequence[Any]:
            batch = reader(cursor, start, limit, stop)
            read.update(notification.id for notification in batch)
            return batch

        monkeypatch.setattr(store.projector, "read_notifications", counted)
    else:
        recorder = store.app.recorder
        select = recorder.select_notifications

        def selected(*args: Any, **kwargs: Any) -> Sequence[Any]:
            batch = select(*args, **kwargs)
            read.update(notification.id for notification in batch)
            return batch

        monkeypatch.setattr(recorder, "select_notifications", selected)
    return read


def test_verify_reads_each_event_once_for_every_check_and_the_rebuild(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    play_some_rounds(store)
    store.projector.catch_up()
    read = _count_reads(store, monkeypatch)
    collector_before = gc.get_threshold()

    report = verify(store, None, lambda _: None)

    assert report.problems == []
    assert sorted(read) == list(range(1, report.events + 1))
    assert set(read.values()) == {1}
    assert gc.get_threshold() == collector_before  # the collector's pace is given back


def _fed_aside(store: Store, left_out: str | None = None) -> list[str]:
    """A rebuild aside fed the first half of the log (but its first event of topic
    `left_out`), the rest left to it, then compared with the live read models."""
    store.projector.catch_up()
    with store.database.read() as cursor:
        first_half = store.projector.read_notifications(
            cursor, 0, store.projector.position() // 2, None
        )
    skipped = next((n.id for n in first_half if n.topic == left_out), None)
    with Aside(store, lambda _: None) as aside:
        for notification in first_half:
            if notification.id != skipped:
                aside.add(notification.id, store.projector.to_event(notification))
        return aside.compare().differences


def test_a_rebuild_aside_fed_part_of_the_log_reads_the_rest_from_it(store: Store) -> None:
    play_some_rounds(store)
    assert _fed_aside(store) == []


def test_what_the_rebuild_aside_is_fed_is_what_it_compares(store: Store) -> None:
    play_some_rounds(store)
    differences = _fed_aside(store, left_out=DEPOSITED)
    assert named(differences, "ledger_entries: 1 rows only in the live read model")


def test_an_event_that_cannot_be_read_stops_the_rebuild_aside_and_is_named(
    store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    store.projector.catch_up()  # The live read models took it in before it was broken.
    target = attacker.row("casino:Coup.CardDealt", 2)
    attacker.set_state(target.position, b"x" + target.state[1:])

    problems = problems_of(store)

    assert named(problems, f"event at position {target.position}", "cannot be read")
    assert named(problems, "the read models could not be rebuilt to compare")
