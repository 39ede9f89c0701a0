"""Open rounds and who plays in them (projections/open_rounds.py): what is left once
a coup ends, wherever the projector's batches fall, a tampered log's repeats included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import pytest

from domain.tables import coup
from infra.store.store import Store
from projections.base import rows
from projections.open_rounds import OpenRounds

START = datetime(2026, 12, 1, tzinfo=UTC)


def event(topic: str, round_id: Any, second: int, **fields: Any) -> Any:
    kind = type(topic.rsplit(".", 1)[-1], (), {"TOPIC": topic})
    made = kind()
    made.__dict__.update(originator_id=round_id, timestamp=START + timedelta(seconds=second))
    made.__dict__.update(fields)
    return made


def left_after(store: Store, batches: list[list[Any]]) -> tuple[set[Any], set[Any]]:
    """The open rounds and their players once each batch is applied and flushed."""
    database = store.projector.database
    for batch in batches:
        view = OpenRounds()
        for position, one in enumerate(batch, start=1):
            view.apply(one, position)
        with database.write() as cursor:
            view.flush(cursor)
    with database.read() as cursor:
        opened = {
            tuple(r) for r in rows(cursor, "SELECT round_id, last_action_at FROM open_rounds")
        }
        players = {tuple(r) for r in rows(cursor, "SELECT * FROM open_round_players")}
    return opened, players


def played_coup(round_id: Any) -> list[Any]:
    return [
        event(coup.OPENED, round_id, 0, banker_id="bank", player_id=""),
        event(coup.BET_PLACED, round_id, 1, player_id="ann"),
        event(coup.BET_PLACED, round_id, 2, player_id="bob"),
        event(coup.SETTLED, round_id, 3),
    ]


@pytest.mark.parametrize("split", [4, 1, 2, 3])
def test_an_ended_coup_leaves_no_rows_wherever_the_batches_fall(store: Store, split: int) -> None:
    events = played_coup(uuid4())
    assert left_after(store, [events[:split], events[split:]]) == (set(), set())


def test_a_coup_still_open_keeps_its_last_action_and_every_player(store: Store) -> None:
    round_id = uuid4()
    events = played_coup(round_id)[:3]
    opened, players = left_after(store, [events[:2], events[2:]])
    assert opened == {(str(round_id), (START + timedelta(seconds=2)).isoformat())}
    assert players == {(str(round_id), p) for p in ("bank", "ann", "bob")}


@pytest.mark.parametrize("split", [1, 2, 3])
def test_a_tampered_logs_repeated_open_leaves_the_same_rows_in_any_batches(
    store: Store, split: int
) -> None:
    # An open, a bet; then the same round opened again and settled
    round_id = uuid4()
    events = [*played_coup(round_id)[:2], *played_coup(round_id)[:1], played_coup(round_id)[3]]
    assert left_after(store, [events[:split], events[split:]]) == (set(), set())


def test_an_event_whose_time_is_no_time_is_refused_at_once(store: Store) -> None:
    view = OpenRounds()
    broken = event(coup.BET_PLACED, uuid4(), 0, player_id="ann")
    broken.timestamp = "2026-12-01T00:00:00+00:00"
    with pytest.raises(TypeError, match="not a datetime"):
        view.apply(broken, 1)
