"""Blackjack rounds settled per second through the application, on SQLite and PostgreSQL.

Each round: open it in hall 2, bet $10 on one to three boxes, deal, then play
every hand by a simple rule (decline insurance, hit below 17, stand on 17 or
more) until the round settles. One client; each command is one atomic save.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import cast

import psycopg

from domain.any_round import Dealt
from domain.blackjack import play as rules
from domain.blackjack import state as play_state
from domain.blackjack.hands import hand_value
from domain.blackjack.round import IN_PLAY, BlackjackRound
from infra.store.store import Store, open_store

POSTGRES_URL = os.environ.get(
    "CASINO_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
ROUNDS = int(os.environ.get("BENCH_BLACKJACK_ROUNDS", "300"))
STAKE_CENTS = 1000
STAND_FROM = 17


def decide(round_: BlackjackRound, turn: play_state.Turn) -> str:
    if round_.state["phase"] == play_state.PHASE_INSURANCE:
        return rules.NO_INSURANCE
    cards = round_.play_box(turn.box_number)["hands"][turn.hand_index]["cards"]
    return rules.STAND if hand_value(cards).total >= STAND_FROM else rules.HIT


def play_round(store: Store, boxes: int) -> int:
    """One round from opening to settlement; returns how many commands it took."""
    app = store.app
    round_ = app.open_blackjack_round("bench", "real", "2").result
    assert round_ is not None
    round_id = round_.round_id
    for box in range(1, boxes + 1):
        app.place_bet(round_id, str(box), STAKE_CENTS)
    dealt = cast(Dealt, app.deal(round_id).result).round
    assert isinstance(dealt, BlackjackRound)
    commands = boxes + 2
    while dealt.status == IN_PLAY:
        turn = dealt.next_turn()
        assert turn is not None
        acted = app.act(round_id, turn.box_number, turn.hand_index, decide(dealt, turn)).result
        assert acted is not None
        dealt, commands = acted, commands + 1
    return commands


def rounds_per_second(store: Store) -> tuple[float, float]:
    store.app.register_player("bench", "bench")
    store.app.deposit("bench", "real", 10_000_000_00)
    rng = random.Random(1)
    commands = 0
    started = time.perf_counter()
    for _ in range(ROUNDS):
        commands += play_round(store, rng.randint(1, 3))
    elapsed = time.perf_counter() - started
    return ROUNDS / elapsed, commands / elapsed


def run() -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as directory:
        store = open_store(f"sqlite:///{Path(directory) / 'bench.sqlite'}")
        try:
            rounds, commands = rounds_per_second(store)
        finally:
            store.close()
        figures["sqlite_blackjack_rounds_per_s"] = rounds
        figures["sqlite_blackjack_commands_per_s"] = commands
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    store = open_store(POSTGRES_URL, postgres_schema=schema)
    try:
        rounds, commands = rounds_per_second(store)
    finally:
        store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")  # type: ignore[arg-type]
    figures["postgres_blackjack_rounds_per_s"] = rounds
    figures["postgres_blackjack_commands_per_s"] = commands
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:45s} {value:10.1f}")
