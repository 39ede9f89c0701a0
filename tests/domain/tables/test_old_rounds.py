"""House and P2P rounds stored by the aggregate they had before baccarat was one model
(`casino:BaccaratRound`), given as their stored events: they replay to the coups they
are, and a round left open is played on by today's coup (domain/tables/old_rounds.py)."""

from __future__ import annotations

import datetime
from typing import Any
from uuid import uuid4

from domain.rounds import replay
from domain.shoe import commitment
from domain.tables import old_rounds
from domain.tables.coup import Coup
from domain.tables.games import rules_of
from tests.domain.events import then

SEED = "00" * 32
EXAMPLE = ["10", "K", "3", "10", "10", "Q"]  # player 10,3 then 10 (3); banker K,10 then Q (0)
AT = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
ID = uuid4()


def stored(kind: type, version: int, **fields: Any) -> Any:
    """An old event as the mapper makes it of a stored one: its fields, no constructor."""
    event = object.__new__(kind)
    envelope = {"originator_id": ID, "originator_version": version, "timestamp": AT}
    object.__setattr__(event, "__dict__", envelope | fields)
    return event


def old_opened(dealer: str | None) -> Any:
    return stored(
        old_rounds.Opened,
        1,
        originator_topic=old_rounds.ROUND,
        variant="p2p" if dealer else "house",
        mode="real",
        player_id="pat",
        dealer_id=dealer,
        table_id="t1" if dealer else None,
        decks=6,
        tie_pays=9,
        stake_min_cents=200,
        stake_max_cents=10_000,
        commission_basis_points=175 if dealer else 0,
        seed=SEED,  # in clear: opened before seeds were sealed
        seed_commitment=commitment(SEED),
        shoe_prefix=EXAMPLE,
        shuffle_algorithm="fy-sha256-v1",
    )


def old_bet(version: int, spot: str, cents: int) -> Any:
    return stored(old_rounds.BetPlaced, version, spot=spot, amount_cents=cents, chips=[10])


def test_an_old_open_round_replays_to_a_one_seat_coup() -> None:
    round_ = replay([old_opened("dan"), old_bet(2, "banker", 1000), old_bet(3, "tie", 200)])
    assert isinstance(round_, Coup) and round_.one_seat
    assert (round_.variant, round_.player_id, round_.banker_id, round_.table_id) == (
        "p2p",
        "pat",
        "dan",
        "t1",
    )
    assert (round_.bet_min_cents, round_.bet_max_cents, round_.bank_cents) == (200, 10_000, 0)
    assert round_.bets == {"pat": {"banker": 1000, "tie": 200}}


def test_an_old_open_p2p_round_is_dealt_by_todays_coup() -> None:
    round_ = replay([old_opened("dan"), old_bet(2, "banker", 1000)])
    round_.deal(rules_of("p2p"), ["pat"], set(), AT.isoformat())
    events = then(round_)
    assert [kind for kind, _ in events][-3:] == ["PayoutMade", "CommissionCharged", "Settled"]
    assert events[-3][1] == {
        "player_id": "pat",
        "spot": "banker",
        "stake_cents": 1000,
        "net_cents": -1000,
    }
    assert round_.nets() == {"pat": -1000, "dan": 982}  # the seed's worked example


def test_an_old_settled_house_round_replays_with_its_cards_payouts_and_seed() -> None:
    cards = [("player", "10S"), ("banker", "KS"), ("player", "3S"), ("banker", "10H")]
    dealt = [stored(old_rounds.CardDealt, 3 + n, hand=h, card=c, position=n)
             for n, (h, c) in enumerate(cards)]  # fmt: skip
    round_ = replay(
        [
            old_opened(None),
            old_bet(2, "player", 500),
            *dealt,
            stored(old_rounds.ThirdCardDrawn, 7, hand="player", card="10D", position=4),
            stored(old_rounds.ThirdCardDrawn, 8, hand="banker", card="QS", position=5),
            stored(old_rounds.PayoutMade, 9, spot="player", stake_cents=500, net_cents=500),
            stored(
                old_rounds.Settled, 10, outcome="player", player_total=3, banker_total=0, seed=SEED
            ),
        ]
    )
    assert (round_.status, round_.outcome, round_.seed) == ("settled", "player", SEED)
    assert round_.hands == {"player": ["10S", "3S", "10D"], "banker": ["KS", "10H", "QS"]}
    assert round_.nets() == {"pat": 500} and round_.casino_net_cents() == -500


def test_an_old_removed_bet_and_void_replay() -> None:
    round_ = replay(
        [
            old_opened("dan"),
            old_bet(2, "banker", 1000),
            stored(old_rounds.BetRemoved, 3, spot="banker", amount_cents=1000),
            stored(old_rounds.Voided, 4, reason="the player left", seed=SEED),
        ]
    )
    assert (round_.bets, round_.status, round_.void_reason) == ({}, "voided", "the player left")
