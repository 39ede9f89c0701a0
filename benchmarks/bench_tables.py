"""Fourteen-player coups at an American table, settled per second through the
application on both stores, beside single-player house rounds in the same run, and
what one coup's deal writes (events, and the saves they go in); whole coups of chemin
de fer and en banque per second; and how long chemin de fer's exact odds take."""

from __future__ import annotations

import datetime
import os
import tempfile
import time
from typing import Any

import psycopg

from benchmarks.bench_rounds import (
    POSTGRES_URL,
    house_rounds_per_second,
    postgres_opener,
    sqlite_opener,
)
from domain.tables.coup import CHOICES_MAX, Coup
from domain.tables.odds import chemin_de_fer_odds
from domain.tables.table import Table
from infra.logs import configure_logging
from infra.store.store import Store

COUPS = int(os.environ.get("BENCH_COUPS", "100"))
PLAYERS = [f"p{seat:02d}" for seat in range(1, 15)]
SEATS = [str(seat) for seat in range(1, 16) if seat != 13]


class Saves:
    """Counts the recorder's saves and the events in each."""

    def __init__(self, store: Store) -> None:
        self.sizes: list[int] = []
        recorder: Any = store.app.recorder
        insert = recorder.insert_events

        def counted(events: Any, **kwargs: Any) -> Any:
            self.sizes.append(len(events))
            return insert(events, **kwargs)

        recorder.insert_events = counted


def full_table(store: Store) -> str:
    app = store.app
    table = app.open_table("punto_banco", "real").result
    assert isinstance(table, Table)
    for player_id, seat in zip(PLAYERS, SEATS, strict=True):
        app.register_player(player_id, player_id)
        app.deposit(player_id, "real", 10_000_000_00)
        app.sit_at_table(table.table_id, player_id, seat)
    return table.table_id


def one_coup(store: Store, table_id: str) -> str:
    app = store.app
    coup = app.open_coup(table_id).result
    assert isinstance(coup, Coup)
    for player_id in PLAYERS:
        for spot in ("player", "banker", "tie"):
            app.place_bet(coup.round_id, spot, 1000, player_id=player_id)
    return coup.round_id


def coups_per_second(store: Store) -> tuple[float, float, int, int]:
    """(coups dealt/s, whole coups/s with their 42 bets, events in a deal's save,
    saves per deal)."""
    table_id = full_table(store)
    dealing, started = 0.0, time.perf_counter()
    for _ in range(COUPS):
        round_id = one_coup(store, table_id)
        dealt = time.perf_counter()
        store.app.deal(round_id)
        dealing += time.perf_counter() - dealt
    whole = COUPS / (time.perf_counter() - started)
    round_id = one_coup(store, table_id)
    saves = Saves(store)
    store.app.deal(round_id)
    return COUPS / dealing, whole, saves.sizes[-1], len(saves.sizes)


FAR_LATER = datetime.datetime(2100, 1, 1, tzinfo=datetime.UTC)
HOUR = datetime.timedelta(hours=1)
BANKED = {"chemin_de_fer": ("1", "2", "3", "4"), "en_banque": ("R1", "L1", "R2", "L2")}


def banked_coups_per_second(store: Store, game: str) -> float:
    """Whole coups at a player-banked table: open, three punters' bets, the deal, and
    any choice owed made by the system (its deadline long past)."""
    app, seats = store.app, BANKED[game]
    table = app.open_table(game, "real").result
    assert isinstance(table, Table)
    players = [f"{game[:3]}-{seat}" for seat in seats]
    for player_id, seat in zip(players, seats, strict=True):
        app.register_player(player_id, player_id)
        app.deposit(player_id, "real", 10_000_000_00)
        app.sit_at_table(table.table_id, player_id, seat)
    spots = ("punto",) if game == "chemin_de_fer" else ("right", "left", "both")
    started = time.perf_counter()
    for index in range(COUPS):
        current = app.table(table.table_id)
        if current.banker is None:
            banker = current.bank_offered_to or players[index % len(players)]
            app.put_up_bank(table.table_id, banker, 500_000)
            current = app.table(table.table_id)
        coup = app.open_coup(table.table_id).result
        assert isinstance(coup, Coup)
        punters = [p for p in players if p != current.banker]
        for number, player_id in enumerate(punters):
            app.place_bet(coup.round_id, spots[number % len(spots)], 2000, player_id=player_id)
        app.deal(coup.round_id)
        for hours in range(1, CHOICES_MAX + 1):  # each choice owed gets a deadline of its own
            if not app.choose_when_due(coup.round_id, FAR_LATER + hours * HOUR).result:
                break
    return COUPS / (time.perf_counter() - started)


def odds_seconds() -> float:
    started = time.perf_counter()
    chemin_de_fer_odds(6, 500)
    return time.perf_counter() - started


def run() -> dict[str, float]:
    configure_logging("warning")
    figures: dict[str, float] = {}
    schemas: list[str] = []
    with tempfile.TemporaryDirectory() as directory:
        openers = {"sqlite": sqlite_opener(directory), "postgres": postgres_opener(schemas)}
        for backend, opener in openers.items():
            store = opener()
            try:
                house = house_rounds_per_second(store)
                deals, whole, events, saves = coups_per_second(store)
                for game in BANKED:
                    figures[f"{backend}_{game}_coups_per_s"] = banked_coups_per_second(store, game)
            finally:
                store.close()
            figures[f"{backend}_house_rounds_per_s"] = house
            figures[f"{backend}_14_player_coup_deals_per_s"] = deals
            figures[f"{backend}_14_player_coups_with_42_bets_per_s"] = whole
            figures[f"{backend}_deal_cost_in_house_rounds"] = house / deals
            figures[f"{backend}_whole_coup_cost_in_house_rounds"] = house / whole
            figures[f"{backend}_events_in_a_deals_save"] = events
            figures[f"{backend}_saves_per_deal"] = saves
    figures["chemin_de_fer_exact_odds_seconds"] = odds_seconds()
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        for schema in schemas:
            connection.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]
    return figures
