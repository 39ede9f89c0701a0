"""House baccarat through the application: a few hundred random rounds, on both stores."""

import random
from typing import cast

from domain.any_round import Dealt
from domain.shoe import shuffled_shoe
from domain.tables.coup import Coup
from infra.store.store import Store
from projections import balances

PLAYERS = ("p0", "p1", "p2", "p3")


def test_after_hundreds_of_random_rounds_the_books_balance(store: Store) -> None:
    rng = random.Random(7)
    app = store.app
    for player in PLAYERS:
        app.register_player(player, player)
        # Enough that no run of luck can refuse a bet: 300 rounds lost at $900 is $270,000.
        app.deposit(player, "real", 30_000_000)
    players_net = 0
    dollars_staked = dict.fromkeys(PLAYERS, 0)
    for _ in range(300):
        player = rng.choice(PLAYERS)
        round_ = app.open_house_round(player, "real").result
        assert round_ is not None
        for spot in rng.sample(["player", "banker", "tie"], rng.randint(1, 3)):
            dollars = rng.randint(1, 300)
            app.place_bet(round_.round_id, spot, dollars * 100)
            dollars_staked[player] += dollars
        settled = cast(Dealt, app.deal(round_.round_id).result).round
        assert isinstance(settled, Coup) and settled.player_id == player
        players_net += settled.nets()[player]
        # Every card dealt is the committed shoe's, re-derived from the revealed seed.
        shoe = shuffled_shoe(settled.seed, settled.decks)
        dealt = settled.hands["player"][:2] + settled.hands["banker"][:2]
        assert dealt == [shoe[0], shoe[2], shoe[1], shoe[3]]
    store.projector.catch_up()
    with store.database.read() as cursor:
        accounts = dict(balances.trial_balance(cursor, "real"))
        assert sum(accounts.values()) == 0
        assert accounts["casino:bank"] == -players_net  # the house's result is the players' loss
        assert balances.liability(cursor, "real")[1] == 0  # nothing left held
    for player in PLAYERS:
        wallet = app.wallet(player, "real")
        assert wallet.points == dollars_staked[player]
        assert accounts[f"player:{player}"] == wallet.balance_cents
