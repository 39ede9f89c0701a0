"""Blackjack through the application: many rounds of random legal play, on both stores.

Players with little money meet doubles, splits and insurance they cannot always
cover; the books must still balance, no wallet may go below zero, and every
settled round, played again from its revealed seed and recorded decisions, must
pay what was paid.
"""

import contextlib
import random
from uuid import UUID

from domain.application import CasinoApplication
from domain.blackjack import play as rules
from domain.blackjack.audit import verify_blackjack_round
from domain.blackjack.round import IN_PLAY, SETTLED_STATUS, BlackjackRound
from domain.blackjack.settlement import settle_round
from domain.errors import (
    AboveTableMaximum,
    BetsAlreadyPlaced,
    InsufficientFunds,
    NoPreviousBets,
)
from domain.ids import wallet_uuid
from domain.rounds import WalletEntry, replay
from domain.settings import BlackjackSettings
from domain.wallet import topic_of
from infra.store.store import Store
from projections import balances
from projections.base import rows

PLAYERS = {"rich": 500_000, "modest": 6_000, "poor": 2_500}
ROUNDS = 100
TOP_UP_BELOW_CENTS, TOP_UP_CENTS = 500, 2_000
# Decisions that hold more money, or end a box at once: chosen more often than at random.
RARE = ("double", "split", "insurance", "even_money")
HALLS = BlackjackSettings().halls
ERRORS_OF_A_SHORT_PURSE = (InsufficientFunds, AboveTableMaximum)


def place_random_bets(app: CasinoApplication, rng: random.Random, round_: BlackjackRound) -> None:
    if rng.random() < 0.3:
        try:
            app.repeat_bets(round_.round_id)
            return
        except (NoPreviousBets, BetsAlreadyPlaced, *ERRORS_OF_A_SHORT_PURSE):
            pass  # Refused as a whole: nothing was placed.
    hall = HALLS[round_.hall]
    for box in rng.sample(range(1, 6), rng.randint(1, 5)):
        stake = rng.randint(hall.stake_min_cents, hall.stake_max_cents // 4)
        with contextlib.suppress(*ERRORS_OF_A_SHORT_PURSE):
            app.place_bet(round_.round_id, str(box), stake)
    if rng.random() < 0.1:
        placed = app.round(round_.round_id)
        assert isinstance(placed, BlackjackRound)
        if len(placed.bets) > 1:
            app.remove_bet(round_.round_id, str(min(placed.bets)))


def play_out(app: CasinoApplication, rng: random.Random, round_id: str) -> BlackjackRound:
    round_ = app.round(round_id)
    assert isinstance(round_, BlackjackRound)
    while round_.status == IN_PLAY:
        turn = round_.next_turn()
        assert turn is not None
        actions = rules.legal_actions(round_.state, turn.box_number, turn.hand_index)
        assert actions, "a hand in play always has a legal action"
        rare = [a for a in actions if a in RARE]
        action = rng.choice(rare if rare and rng.random() < 0.6 else actions)
        try:
            outcome = app.act(round_id, turn.box_number, turn.hand_index, action)
        except InsufficientFunds:
            free = [a for a in actions if a in ("hit", "stand", "no_insurance", "even_money")]
            outcome = app.act(round_id, turn.box_number, turn.hand_index, rng.choice(free))
        assert outcome.result is not None
        round_ = outcome.result
    assert app.wallet(round_.player_id, round_.mode).available_cents >= 0
    return round_


def play_many_rounds(store: Store, rng: random.Random) -> list[str]:
    app, settled = store.app, []
    for _ in range(ROUNDS):
        player = rng.choice(list(PLAYERS))
        if app.wallet(player, "real").available_cents < TOP_UP_BELOW_CENTS:
            app.deposit(player, "real", TOP_UP_CENTS)  # Broke players would stop the play.
        opened = app.open_blackjack_round(player, "real", rng.choice(["1", "2"])).result
        assert opened is not None
        place_random_bets(app, rng, opened)
        current = app.round(opened.round_id)
        assert isinstance(current, BlackjackRound)
        if not current.bets:
            continue
        app.deal(opened.round_id)
        round_ = play_out(app, rng, opened.round_id)
        assert round_.status == SETTLED_STATUS
        settled.append(round_.round_id)
    return settled


def wallet_entries(app: CasinoApplication, round_id: str) -> list[WalletEntry]:
    entries = []
    for player in PLAYERS:
        for event in app.events.get(wallet_uuid(player, "real")):
            if getattr(event, "round_id", None) == round_id:
                entries.append(WalletEntry(player, topic_of(event), event))
    return entries


def test_random_legal_play_keeps_the_books_and_settles_the_same_on_replay(store: Store) -> None:
    app, rng = store.app, random.Random(5)
    for player, cents in PLAYERS.items():
        app.register_player(player, player)
        app.deposit(player, "real", cents)
    settled = play_many_rounds(store, rng)
    assert len(settled) > ROUNDS // 3
    store.projector.catch_up()
    with store.database.read() as cursor:
        accounts = dict(balances.trial_balance(cursor, "real"))
        assert sum(accounts.values()) == 0
        overdrawn = "SELECT player_id FROM wallet_balances WHERE balance_cents < held_cents"
        negative = list(rows(cursor, overdrawn))
        assert negative == []
        assert balances.liability(cursor, "real")[1] == 0  # every round settled: nothing held
    for player in PLAYERS:
        wallet = app.wallet(player, "real")
        assert wallet.available_cents >= 0
        assert accounts[f"player:{player}"] == wallet.balance_cents
    for round_id in settled:
        events = list(app.events.get(UUID(round_id)))
        again = replay(events)
        assert isinstance(again, BlackjackRound)
        resettled = settle_round(again.state)
        assert [box["net_cents"] for box in resettled["boxes"]] == [
            payout["net_cents"] for payout in again.payouts
        ]
        assert verify_blackjack_round(events, wallet_entries(app, round_id)) == []
