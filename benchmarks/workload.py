"""A mixed, repeatable workload through the application: every game and every kind of
wallet movement. Used by the read-model tests (rebuild equals live) and by the
rebuild benchmark (a log of hundreds of thousands of events)."""

from __future__ import annotations

import random
import typing
from dataclasses import dataclass

from domain.any_round import Dealt
from domain.blackjack import play as rules
from domain.blackjack import state as play_state
from domain.blackjack.hands import hand_value
from domain.blackjack.round import IN_PLAY, BlackjackRound
from domain.errors import DomainError
from infra.store.store import Store

MODES = ("real", "play")
STAND_FROM = 17
FUNDS_CENTS = 1_000_000_00


@dataclass(frozen=True)
class Cast:
    """Who plays: house players, and P2P tables with a seated player each."""

    players: list[str]
    tables: list[str]


def set_up(store: Store, players: int = 4, tables: int = 2, prefix: str = "") -> Cast:
    """Players and P2P tables, each name beginning with `prefix` (a second cast on a
    store that holds one already)."""
    app = store.app
    names = [f"{prefix}p{n}" for n in range(players)]
    for name in names:
        app.register_player(name, name)
        for mode in MODES:
            app.deposit(name, mode, FUNDS_CENTS)
    table_ids = []
    for n in range(tables):
        dealer, player = f"{prefix}d{n}", f"{prefix}q{n}"
        for name in (dealer, player):
            app.register_player(name, name)
            app.deposit(name, "real", FUNDS_CENTS)
        app.adjust_points(dealer, "real", 1_000_000, "workload")
        table = app.sit_as_dealer(dealer, "real", "II", auto_confirm=False).result
        assert table is not None
        app.join_as_player(player, "real", "II")
        table_ids.append(table.table_id)
    return Cast(names, table_ids)


def play(store: Store, cast: Cast, rounds: int, seed: int = 1) -> None:
    """`rounds` rounds, each of a game picked at random, plus wallet movements."""
    rng = random.Random(seed)
    for _ in range(rounds):
        game = rng.choice((house_round, p2p_round, blackjack_round, movements))
        game(store, cast, rng)


def house_round(store: Store, cast: Cast, rng: random.Random) -> None:
    app = store.app
    round_ = app.open_house_round(rng.choice(cast.players), rng.choice(MODES)).result
    assert round_ is not None
    for spot in rng.sample(("banker", "player", "tie"), rng.randint(1, 2)):
        app.place_bet(round_.round_id, spot, rng.choice((100, 500, 1000)))
    if rng.random() < 0.1:
        return  # Left open: the idle-round worker's business, and the liability report's.
    app.deal(round_.round_id)


def p2p_round(store: Store, cast: Cast, rng: random.Random) -> None:
    app = store.app
    round_ = app.confirm(rng.choice(cast.tables)).result
    assert round_ is not None
    app.place_bet(round_.round_id, rng.choice(("player", "banker")), rng.choice((500, 1000)))
    app.deal(round_.round_id)


def blackjack_round(store: Store, cast: Cast, rng: random.Random) -> None:
    app = store.app
    player = rng.choice(cast.players)
    try:
        round_ = app.open_blackjack_round(player, rng.choice(MODES), "2").result
    except DomainError:
        return  # This player's previous blackjack round is still in play elsewhere.
    assert round_ is not None
    for box in range(1, rng.randint(1, 3) + 1):
        app.place_bet(round_.round_id, str(box), rng.choice((1000, 2500)))
    dealt = typing.cast(Dealt, app.deal(round_.round_id).result).round
    assert isinstance(dealt, BlackjackRound)
    while dealt.status == IN_PLAY:
        turn = dealt.next_turn()
        assert turn is not None
        acted = app.act(round_.round_id, turn.box_number, turn.hand_index, _decide(dealt, turn))
        assert isinstance(acted.result, BlackjackRound)
        dealt = acted.result


def _decide(round_: BlackjackRound, turn: play_state.Turn) -> str:
    if round_.state["phase"] == play_state.PHASE_INSURANCE:
        return rules.NO_INSURANCE
    cards = round_.play_box(turn.box_number)["hands"][turn.hand_index]["cards"]
    return rules.STAND if hand_value(cards).total >= STAND_FROM else rules.HIT


def movements(store: Store, cast: Cast, rng: random.Random) -> None:
    app = store.app
    player, mode = rng.choice(cast.players), rng.choice(MODES)
    app.deposit(player, mode, rng.randint(1, 10_000))
    app.withdraw(player, mode, rng.randint(1, 5_000))
