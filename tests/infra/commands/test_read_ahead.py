"""A command's read-ahead (infra/commands/unit.py: `Unit.read_ahead`): a provider's
bet looks up its transaction and its round in one round trip on PostgreSQL, and what
it finds that way is what it would have found one by one: a tombstone still refuses
the late bet, a round another server opened still takes the next bet."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import TransactionRolledBack
from domain.providers.round import round_uuid
from domain.providers.steps import Call
from infra.store.store import Store
from tests.conftest import StoreFactory

SECRET = "a-provider-secret-of-at-least-thirty-two-chars"


def _session(store: Store) -> str:
    app = store.app
    app.register_provider("acme", "Acme", [SECRET], False, None)
    app.register_player("alice", "Alice")
    app.deposit("alice", "real", 10_000)
    opened = app.open_game_session("alice", "acme", "slot", "real").result
    assert opened is not None
    return opened.token


def _forget_cached(store: Store) -> None:
    """As a server that saved none of it: its cache is empty."""
    cache = store.app.repository.cache
    assert cache is not None
    cache.cache.clear()


def _counting_reads(store: Store) -> list[str]:
    recorder: Any = store.app.recorder
    reads: list[str] = []
    for name in ("select_events", "select_newer"):
        original = getattr(recorder, name)

        def counted(*args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
            reads.append(_name)
            return _original(*args, **kw)

        setattr(recorder, name, counted)
    return reads


@pytest.mark.postgres
def test_a_bet_opening_its_round_asks_the_store_once(postgres_stores: StoreFactory) -> None:
    store = postgres_stores.open()
    token = _session(store)
    reads = _counting_reads(store)
    store.app.provider_bet(Call("acme", token, "b1"), "r1", "slot", 100)
    assert reads == ["select_newer"]
    reads.clear()
    store.app.provider_win(Call("acme", token, "w1"), "r1", 150)
    assert reads == []  # the round as the bet saved it, from the cache


def test_a_tombstone_read_ahead_still_refuses_the_late_bet(stores: StoreFactory) -> None:
    store = stores.open()
    token = _session(store)
    store.app.provider_rollback(Call("acme", token, "r-1"), "b-late")
    _forget_cached(store)
    with pytest.raises(TransactionRolledBack):
        store.app.provider_bet(Call("acme", token, "b-late"), "r1", "slot", 100)
    assert store.app.wallet("alice", "real").balance_cents == 10_000


def test_a_round_read_ahead_takes_the_next_bet(stores: StoreFactory) -> None:
    store = stores.open()
    token = _session(store)
    store.app.provider_bet(Call("acme", token, "b1"), "r1", "slot", 100)
    _forget_cached(store)
    store.app.provider_bet(Call("acme", token, "b2"), "r1", "slot", 200)
    store.app.provider_win(Call("acme", token, "w1"), "r1", 600)
    round_ = store.app.provider_round(str(round_uuid("acme", "alice", "real", "r1")))
    assert round_ is not None
    assert (round_.staked_cents, round_.won_cents, sorted(round_.bets)) == (300, 600, ["b1", "b2"])
    assert store.app.wallet("alice", "real").balance_cents == 10_000 - 300 + 600
