"""The read models: fed exactly once, rebuildable, and in agreement with the events
after a few hundred mixed rounds of every game."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from eventsourcing.domain import DomainEvent

from benchmarks import workload
from domain import wallet as topics
from domain.tables.coup import Coup
from infra.audit.rebuild import compare_with_rebuild, rebuild
from infra.store.store import Store
from projections import balances, commission, game_history, ledger, revenue, round_trail
from projections.failure import ProjectionFailed
from projections.runner import position_in
from tests.conftest import StoreFactory
from tests.projections.test_projection_failure import restarted


def no_progress(_: int) -> None:
    pass


def every_notification(store: Store) -> list[Any]:
    return list(store.app.recorder.select_notifications(start=1, limit=1_000_000))


def trial_balance(store: Store, mode: str = "real") -> dict[str, int]:
    store.projector.catch_up()
    with store.database.read() as cursor:
        return dict(balances.trial_balance(cursor, mode))


def test_an_event_fed_twice_is_applied_once(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 500)
    store.projector.catch_up()
    before = trial_balance(store)
    with store.database.write() as cursor:
        assert store.projector.apply(cursor, every_notification(store)) == 0
    store.app.deposit("alice", "real", 250)
    with store.database.write() as cursor:  # The old events again, with one new one.
        assert store.projector.apply(cursor, every_notification(store)) == 1
    assert before["player:alice"] == 500
    assert trial_balance(store)["player:alice"] == 750
    assert compare_with_rebuild(store, no_progress).differences == []


def test_a_batch_that_fails_part_way_leaves_no_trace(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.app.register_player("alice", "Alice")
    store.projector.catch_up()
    position = store.projector.position()
    store.app.deposit("alice", "real", 500)

    def crash(*_: Any) -> None:  # After the balances were written, before the position.
        raise RuntimeError("the projector died here")

    monkeypatch.setattr(round_trail.RoundTrail, "flush", crash)
    with pytest.raises(ProjectionFailed, match="read model round_trail"):
        store.projector.catch_up()
    assert store.projector.position() == position
    with store.database.read() as cursor:
        assert dict(balances.trial_balance(cursor, "real")) == {}
    monkeypatch.undo()
    store.projector = restarted(store)  # The projector stopped there: started again,
    store.projector.catch_up()
    assert trial_balance(store)["player:alice"] == 500
    assert compare_with_rebuild(store, no_progress).differences == []


def test_a_rebuild_aside_names_what_differs_from_the_live_read_models(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 500)
    store.projector.catch_up()
    with store.database.write() as cursor:  # A live read model gone wrong.
        cursor.execute("UPDATE wallet_balances SET balance_cents = 1 WHERE mode = 'real'")
        cursor.execute("DELETE FROM ledger_entries")
    found = compare_with_rebuild(store, no_progress).differences
    assert found == [
        "wallet_balances: 1 rows that differ, e.g. [('alice', 'real')]",
        "ledger_entries: 1 rows only in the rebuild, e.g. [('alice', 'real', 2)]",
    ]
    store.app.deposit("alice", "real", 250)  # Comes in while the rebuild is swapped in.
    assert rebuild(store, no_progress, replace=True).differences == found
    assert compare_with_rebuild(store, no_progress).differences == []
    with store.database.read() as cursor:
        assert dict(balances.trial_balance(cursor, "real"))["player:alice"] == 750


@pytest.fixture
def played(store: Store) -> Store:
    """A few hundred rounds of every game, and money in and out between them."""
    workload.play(store, workload.set_up(store), rounds=300, seed=7)
    store.projector.catch_up()
    return store


def test_after_mixed_rounds_a_rebuild_equals_the_live_read_models(played: Store) -> None:
    comparison = compare_with_rebuild(played, no_progress)
    assert comparison.position == played.projector.head()
    assert comparison.differences == []
    played.projector.rebuild()
    assert compare_with_rebuild(played, no_progress).differences == []


def test_after_mixed_rounds_the_books_balance_and_match_the_wallets(played: Store) -> None:
    app = played.app
    with played.database.read() as cursor:
        for mode in workload.MODES:
            assert sum(cents for _, cents in balances.trial_balance(cursor, mode)) == 0
            total, held, count = balances.liability(cursor, mode)
            wallets = [app.wallet(p, mode) for p in _players(cursor, mode)]
            assert (total, held, count) == (
                sum(w.balance_cents for w in wallets),
                sum(w.held_cents for w in wallets),
                len(wallets),
            )
            assert held == _stakes_in_open_rounds(played, cursor, mode) > 0


def test_after_mixed_rounds_the_ledgers_add_up_to_each_balance(played: Store) -> None:
    with played.database.read() as cursor:
        for mode in workload.MODES:
            for player_id in _players(cursor, mode):
                entries = ledger.entries(cursor, player_id, mode, 0, 1_000_000)
                balance = 0
                for entry in entries:
                    balance += entry["amount_cents"]
                    assert entry["balance_after_cents"] == balance
                assert balance == played.app.wallet(player_id, mode).balance_cents


def test_after_mixed_rounds_the_commission_report_sums_the_charges(played: Store) -> None:
    charged: dict[str, int] = defaultdict(int)
    for notification in every_notification(played):
        event = played.app.mapper.to_domain_event(notification)
        if topics.topic_of(event) == topics.COMMISSION_CHARGED:
            charged[event.timestamp.date().isoformat()] += event.commission_cents
    with played.database.read() as cursor:
        days = commission.per_day(cursor, "real", "0000-01-01", "9999-12-31")
    assert {day: cents for day, cents, _ in days} == dict(charged)
    assert sum(charged.values()) > 0


def test_after_mixed_rounds_the_history_matches_the_rounds(played: Store) -> None:
    with played.database.read() as cursor:
        results = [
            {**result, "player_id": player_id}
            for player_id in _players(cursor, "real")
            for result in game_history.recent(cursor, player_id, "real", game_history.ROUNDS_MAX)
        ]
    commissions: dict[str, int] = defaultdict(int)
    for result in results:
        round_ = played.app.round(result["round_id"])
        assert round_.status == "settled"
        assert result["balance_after_cents"] - result["balance_before_cents"] == result["net_cents"]
        # A coup (house, P2P) says what it came to for each of its players, its dealer too.
        coup = isinstance(round_, Coup)
        expected = round_.nets()[result["player_id"]] if coup else round_.player_net_cents
        assert result["net_cents"] == expected
        commissions[result["round_id"]] += result["commission_cents"]
    assert len(results) > 100
    for round_id, cents in commissions.items():
        assert cents == getattr(played.app.round(round_id), "commission_cents", 0)


def test_after_mixed_rounds_the_revenue_report_reconciles_with_the_trial_balance(
    played: Store,
) -> None:
    with played.database.read() as cursor:
        for mode in workload.MODES:
            # Given the books of a store that began empty: what each account moved.
            books = dict(balances.trial_balance(cursor, mode))
            bank, taken = books[topics.CASINO_BANK], books.get(topics.CASINO_COMMISSION, 0)
            # When the revenue of every day and game is added up,
            rows = revenue.revenue_rows(cursor, mode, "0000-01-01", "9999-12-31", month=False)
            rounds, stakes, returns, ggr, charged = revenue.revenue_total(
                cursor, mode, "0000-01-01", "9999-12-31"
            )
            # then the house's result is the casino's bank, and the GGR both accounts.
            house = [r for r in rows if (r[1], r[2]) != ("baccarat", "p2p")]
            assert sum(r[4] - r[5] for r in house) == bank != 0
            assert charged == taken and ggr == bank + taken
            assert (stakes, returns) == (sum(r[4] for r in rows), sum(r[5] for r in rows))
            cursor.execute(
                "SELECT COUNT(*) FROM round_index WHERE mode = ? AND status = 'settled'", (mode,)
            )
            assert rounds == int(cursor.fetchone()[0]) > 50


def _players(cursor: Any, mode: str) -> list[str]:
    cursor.execute("SELECT player_id FROM wallet_balances WHERE mode = ?", (mode,))
    return [str(row[0]) for row in cursor.fetchall()]


def _stakes_in_open_rounds(store: Store, cursor: Any, mode: str) -> int:
    """What the rounds still open hold, read from the rounds themselves."""
    assert position_in(cursor) == store.projector.head()
    cursor.execute("SELECT round_id FROM open_rounds")
    held = 0
    for (round_id,) in cursor.fetchall():
        round_ = store.app.round(str(round_id))
        if round_.mode == mode:
            held += round_.total_stake_cents
    return held


def test_read_models_of_an_earlier_version_are_rebuilt_on_opening(stores: StoreFactory) -> None:
    store = stores.open()
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 500)
    store.projector.catch_up()
    with store.database.write() as cursor:  # As the version before ledger_entries left it.
        cursor.execute("UPDATE projection_tracking SET projection = 'read_models'")
        cursor.execute("DELETE FROM ledger_entries")
    stores.close(store)
    reopened = stores.open()
    assert reopened.projector.position() == 0
    reopened.projector.catch_up()
    with reopened.database.read() as cursor:
        entries = ledger.entries(cursor, "alice", "real", 0, 10)
    assert [(e["kind"], e["amount_cents"]) for e in entries] == [("deposit", 500)]
    assert compare_with_rebuild(reopened, no_progress).differences == []


def every_event_class() -> list[type]:
    """Every event class of the casino's aggregates (the application imports them all)."""
    import domain.application  # noqa: F401

    found: set[type] = set()
    waiting: list[type] = [DomainEvent]
    while waiting:
        for subclass in waiting.pop().__subclasses__():
            if subclass not in found:
                found.add(subclass)
                waiting.append(subclass)
    return sorted((c for c in found if getattr(c, "TOPIC", None)), key=lambda c: c.TOPIC)


def untouchable(kind: type) -> Any:
    """An event of a class's topic whose every field refuses to be read."""

    class Untouchable(kind):  # type: ignore[misc, valid-type]
        TOPIC = kind.TOPIC  # type: ignore[attr-defined]

        def __getattribute__(self, name: str) -> Any:
            raise AssertionError(f"{name} of a {kind.TOPIC} was read")  # type: ignore[attr-defined]

    return object.__new__(Untouchable)


def test_each_view_is_given_every_event_it_uses(store: Store) -> None:
    """The projector gives a view only the topics it `wants`: one it left out and
    still read would be silently missing from its read model. Each view, given an
    event of each topic it does not want, reads nothing of it."""
    views = store.projector._views()
    classes = every_event_class()
    assert len(classes) > 80  # every game's, the wallets', the tables', the players'
    for view in views:
        unwanted = [kind for kind in classes if not view.wants(kind.TOPIC)]
        assert unwanted, f"{type(view).__name__} wants every topic"
        for kind in unwanted:
            view.apply(untouchable(kind), 1)
