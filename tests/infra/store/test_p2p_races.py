"""P2P baccarat through the application, on both stores: races and a long random run."""

import random
import threading
from typing import cast

from domain.any_round import Dealt
from domain.errors import NoDealerAvailable
from domain.tables.coup import Coup
from domain.wallet import COMMISSION_CHARGED, POINTS_CHANGED
from infra.store.store import Store
from projections import balances, commission
from tests.conftest import every_store_event


def qualified_dealer(store: Store, player_id: str, cents: int = 500_000, points: int = 100) -> None:
    store.app.register_player(player_id, player_id)
    store.app.deposit(player_id, "real", cents)
    store.app.adjust_points(player_id, "real", points, "qualifies")


def test_two_players_asking_for_the_last_free_dealer_get_it_once(store: Store) -> None:
    qualified_dealer(store, "dan")
    store.app.sit_as_dealer("dan", "real", "II", False)
    for name in ("p1", "p2"):
        store.app.register_player(name, name)
    start = threading.Barrier(2)
    results: dict[str, str] = {}

    def ask(name: str) -> None:
        start.wait()
        try:
            table = store.app.join_as_player(name, "real", "II").result
            results[name] = "seated" if table is not None else "?"
        except NoDealerAvailable:
            results[name] = "refused"

    threads = [threading.Thread(target=ask, args=(name,)) for name in ("p1", "p2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results.values()) == ["refused", "seated"]
    winner = next(name for name, result in results.items() if result == "seated")
    seated = [
        e for e in every_store_event(store) if type(e).TOPIC == "casino:P2PTable.PlayerSeated"
    ]
    assert [e.player_id for e in seated] == [winner]


def test_five_hundred_random_rounds_over_several_tables_keep_the_books(store: Store) -> None:
    rng = random.Random(11)
    app = store.app
    tables = []
    for index, table_type in enumerate(["I", "II", "III", "I"]):
        qualified_dealer(store, f"d{index}", cents=2_000_000, points=10_000)
        app.register_player(f"p{index}", f"p{index}")
        app.deposit(f"p{index}", "real", 1_000_000)
        app.sit_as_dealer(f"d{index}", "real", table_type, auto_confirm=True)
        table = app.join_as_player(f"p{index}", "real", table_type).result
        assert table is not None
        tables.append(table.table_id)
    commission_cents = 0
    for _ in range(500):
        table = app.p2p_table(rng.choice(tables))
        assert table.round_id is not None, table.notice
        round_ = app.round(table.round_id)
        assert isinstance(round_, Coup)
        low, high = round_.bet_min_cents // 100, round_.bet_max_cents // 100
        for spot in rng.sample(["player", "banker", "tie"], rng.randint(1, 3)):
            room = high - round_.total_stake_cents // 100
            if room > 0:
                app.place_bet(round_.round_id, spot, rng.randint(1, min(room, 2 * low)) * 100)
                round_ = app.round(round_.round_id)
                assert isinstance(round_, Coup)
        if round_.total_stake_cents < round_.bet_min_cents:
            app.place_bet(
                round_.round_id, "banker", round_.bet_min_cents - round_.total_stake_cents
            )
        settled = cast(Dealt, app.deal(round_.round_id).result).round
        assert isinstance(settled, Coup)
        commission_cents += settled.commission_cents
    store.projector.catch_up()
    events = every_store_event(store)
    with store.database.read() as cursor:
        accounts = dict(balances.trial_balance(cursor, "real"))
        report = commission.per_day(cursor, "real", "0001-01-01", "9999-12-31")
    assert sum(accounts.values()) == 0
    assert accounts["casino:commission"] == commission_cents
    charged = [e.commission_cents for e in events if type(e).TOPIC == COMMISSION_CHARGED]
    assert sum(cents for _, cents, _ in report) == sum(charged) == commission_cents
    assert sum(rounds for _, _, rounds in report) == 500
    round_points = [e for e in events if type(e).TOPIC == POINTS_CHANGED and e.role != "operator"]
    gained = sum(e.change for e in round_points if e.role == "player")
    lost = sum(e.change for e in round_points if e.role == "dealer")
    assert gained == -lost > 0
    for name in [f"d{i}" for i in range(4)] + [f"p{i}" for i in range(4)]:
        wallet = app.wallet(name, "real")
        assert wallet.available_cents >= 0
        assert accounts[f"player:{name}"] == wallet.balance_cents


def test_sitting_down_or_asking_for_a_table_means_being_connected(store: Store) -> None:
    qualified_dealer(store, "dan")
    store.app.register_player("pat", "pat")
    store.app.disconnect("dan")
    store.app.disconnect("pat")
    store.app.sit_as_dealer("dan", "real", "II", False)
    store.app.join_as_player("pat", "real", "II")
    assert store.app.player("dan").connected and store.app.player("pat").connected
