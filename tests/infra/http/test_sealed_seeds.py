"""A round's seed and certification shoe are stored sealed until it is over (rules.md 5):
someone reading the database learns nothing of the cards to come. Every game, both stores."""

import datetime
import json
import sqlite3
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from infra.store.store import Store
from tests.conftest import POSTGRES_URL, Api, StoreFactory
from tests.infra.http.test_p2p import confirm, seated_table
from tests.infra.http.test_tables import open_coup, open_table, sit

# A certification shoe: the player's 10, 3 and the banker's K, 10 first.
SHOE = ["10", "K", "3", "10", "10", "Q"]
LATER = datetime.datetime(2100, 1, 1, tzinfo=datetime.UTC)


def raw_events(stores: StoreFactory) -> list[tuple[str, dict[str, Any], bytes]]:
    """Every stored event as the database itself holds it: its aggregate's id, its
    state parsed and its state's bytes."""
    if stores.backend == "sqlite":
        with sqlite3.connect(stores.url.removeprefix("sqlite:///")) as connection:
            rows = connection.execute(
                "SELECT originator_id, state FROM stored_events ORDER BY rowid"
            ).fetchall()
    else:
        with psycopg.connect(POSTGRES_URL) as connection:
            rows = connection.execute(
                f"SELECT originator_id, state FROM {stores.schema}.casino_events"  # type: ignore[arg-type]
                " ORDER BY notification_id"
            ).fetchall()
    return [(str(uuid.UUID(str(row[0]))), json.loads(bytes(row[1])), bytes(row[1])) for row in rows]


def of_round(events: list[tuple[str, dict[str, Any], bytes]], round_id: str) -> list[Any]:
    return [(state, raw) for aggregate_id, state, raw in events if aggregate_id == round_id]


def house_round(api: Api) -> str:
    api.player("alice", real="100.00")
    answer = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real", "shoe": SHOE})
    assert answer.status_code == 201, answer.text
    round_id: str = answer.json()["round_id"]
    return round_id


def p2p_round(api: Api) -> str:
    answer = confirm(api, seated_table(api), SHOE)
    assert answer.status_code == 201, answer.text
    round_id: str = answer.json()["round_id"]
    return round_id


def coup(api: Api) -> str:
    table_id = open_table(api)
    api.player("ann", real="100.00")
    assert sit(api, table_id, "ann", "1").status_code == 201
    return open_coup(api, table_id, SHOE)


def blackjack_round(api: Api) -> str:
    api.player("alice", real="100.00")
    body = {"player_id": "alice", "mode": "real", "hall": "2", "shoe": SHOE}
    answer = api.post("/v1/blackjack/rounds", body)
    assert answer.status_code == 201, answer.text
    round_id: str = answer.json()["round_id"]
    return round_id


@pytest.mark.parametrize("open_round", [house_round, p2p_round, coup, blackjack_round])
def test_an_open_rounds_seed_and_shoe_are_not_in_the_database_until_it_is_over(
    api: Api, store: Store, stores: StoreFactory, open_round: Callable[[Api], str]
) -> None:
    # Given a round opened with a certification shoe,
    round_id = open_round(api)
    while_open = raw_events(stores)
    [(opening, _)] = of_round(while_open, round_id)
    assert api.get(f"/v1/rounds/{round_id}").json()["seed"] is None
    # when it is over (voided here: no action before the idle timeout),
    assert store.app.end_idle_round(round_id, LATER).result is True
    # then its ending reveals the seed and the shoe, in the trail and in the database,
    trail = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    [ending] = [event for event in trail if event["type"] == "Voided"]
    assert ending["data"]["shoe_prefix"] == SHOE
    seed = ending["data"]["seed"]
    assert api.get(f"/v1/rounds/{round_id}").json()["seed"] == seed
    (stored_ending, _) = of_round(raw_events(stores), round_id)[-1]
    assert (stored_ending["seed"], stored_ending["shoe_prefix"]) == (seed, SHOE)
    # and nothing the database held while it was open had either in clear.
    assert not [raw for _, _, raw in while_open if seed.encode() in raw]
    assert (opening["seed"], opening["shoe_prefix"]) == (None, None)
    assert opening["sealed_secrets"].startswith("aesgcm1:")


def test_a_dealt_round_reveals_its_seed_in_the_settlement(api: Api, stores: StoreFactory) -> None:
    # Given a house round opened with a certification shoe and a bet on the player,
    round_id = house_round(api)
    bet = api.post(f"/v1/rounds/{round_id}/bets", {"spot": "player", "amount": "10"})
    assert bet.status_code == 201, bet.text
    # when it is dealt, the cards are the chosen shoe's (the player wins 3 to 0),
    dealt = api.post(f"/v1/rounds/{round_id}/deal")
    assert dealt.status_code == 200, dealt.text
    assert dealt.json()["outcome"] == "player"
    # and the settlement stored in the database carries the seed and the shoe in clear.
    (settled, _) = of_round(raw_events(stores), round_id)[-1]
    assert (settled["seed"], settled["shoe_prefix"]) == (dealt.json()["seed"], SHOE)
