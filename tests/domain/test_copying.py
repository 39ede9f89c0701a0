"""The aggregates' deep copy (domain/copying.py) is copy.deepcopy's, only faster: a
command works on a copy of the cached aggregate, and must never change the original."""

from __future__ import annotations

import copy
import datetime
import inspect
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate
from hypothesis import given, settings
from hypothesis import strategies as st

import domain.application
from domain.copying import FastCopy, copied
from infra.commands import with_commands
from tests.conftest import seat_p2p_table

ATOMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.uuids(),
    st.datetimes(timezones=st.just(datetime.UTC)),
    st.tuples(st.integers(), st.text(max_size=3)),  # not copied here: handed to deepcopy
)
VALUES = st.recursive(
    ATOMS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def containers(value: Any) -> list[Any]:
    """Every list and dict inside `value`, depth first."""
    found: list[Any] = []
    if isinstance(value, list | dict):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            found += containers(item)
    return found


@settings(max_examples=200, deadline=None)
@given(VALUES, st.booleans())
def test_a_copy_equals_deepcopys_and_shares_no_container(value: Any, aliased: bool) -> None:
    original = [value, value] if aliased else [value]  # the same object twice: aliasing
    copy_ = copied(original, {})
    assert copy_ == copy.deepcopy(original)
    originals = {id(c) for c in containers(original)}
    assert not originals & {id(c) for c in containers(copy_)}
    if aliased:
        assert copy_[0] is copy_[1]  # shared inside the original, shared inside the copy


def every_aggregate_class() -> set[type[Aggregate]]:
    found, pending = set(), list(Aggregate.__subclasses__())
    while pending:
        kind = pending.pop()
        if kind.__module__.startswith("domain."):
            found.add(kind)
        pending += kind.__subclasses__()
    return found


def test_every_aggregate_copies_with_fastcopy() -> None:
    assert inspect.ismodule(domain.application)  # imports every game's aggregates
    classes = every_aggregate_class()
    assert len(classes) >= 10
    slow = [kind.__name__ for kind in classes if not issubclass(kind, FastCopy)]
    assert not slow


def test_a_played_table_and_round_copy_as_their_events_make_them_and_stay_apart() -> None:
    app = with_commands(env={"AGGREGATE_CACHE_MAXSIZE": "100"})
    opened = app.confirm(seat_p2p_table(app, "II"), None).result
    round_id = str(opened.round_id)
    app.place_bet(round_id, "player", 1_000, None)
    app.deal(round_id)
    assert app.repository.cache is not None
    for kind_name in ("P2PTable", "Coup", "Wallet", "Lobby", "Player"):
        cached = next(
            entry[3]
            for entry in app.repository.cache.cache.values()
            if type(entry[3]).__name__ == kind_name
        )
        fast = copy.deepcopy(cached)
        replayed = app.repository.get(cached.id, version=cached.version)  # from its events
        assert vars(fast) == vars(replayed) == vars(cached)
        for name, value in vars(fast).items():
            if isinstance(value, list | dict):
                assert value is not vars(cached)[name], (kind_name, name)
        assert isinstance(fast.id, UUID)
