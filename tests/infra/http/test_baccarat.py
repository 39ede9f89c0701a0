"""House baccarat rounds through the HTTP API, with certification shoes, on both stores."""

import hashlib
from typing import Any

import pytest
from fastapi.testclient import TestClient

from domain.settings import GameSettings, HouseBaccarat
from domain.shoe import certification_shoe
from infra.config import load_settings
from infra.http.app import create_app
from infra.store.store import Store
from tests.conftest import Api, StoreFactory, every_store_event

PLAYER_WINS = ["9", "K", "K", "K"]  # Player 9 (natural) against banker 0
BANKER_WINS = ["K", "9", "K", "K"]
TIE = ["9", "9", "K", "K"]
WORKED_EXAMPLE = ["10", "K", "3", "10", "10", "Q"]  # rules.md 2.1, in dealing order


def open_round(api: Api, shoe: list[str] | None = None, player: str = "alice") -> dict[str, Any]:
    body: dict[str, Any] = {"player_id": player, "mode": "real"}
    if shoe is not None:
        body["shoe"] = shoe
    answer = api.post("/v1/baccarat/rounds", body)
    assert answer.status_code == 201, answer.text
    result: dict[str, Any] = answer.json()
    return result


def bet(api: Api, round_id: str, spot: str, amount: str) -> Any:
    return api.post(f"/v1/rounds/{round_id}/bets", {"spot": spot, "amount": amount})


def deal(api: Api, round_id: str) -> Any:
    return api.post(f"/v1/rounds/{round_id}/deal")


def state(api: Api, store: Store) -> Any:
    return api.wallet("alice"), api.trial_balance(), len(every_store_event(store))


@pytest.fixture
def alice(api: Api) -> str:
    return api.player("alice", real="500.00")


@pytest.mark.parametrize(
    ("shoe", "outcome", "nets", "player_net"),
    [
        (PLAYER_WINS, "player", {"banker": "-10.00", "player": "10.00", "tie": "-10.00"}, "-10.00"),
        (BANKER_WINS, "banker", {"banker": "9.50", "player": "-10.00", "tie": "-10.00"}, "-10.50"),
        (TIE, "tie", {"banker": "0.00", "player": "0.00", "tie": "80.00"}, "80.00"),
    ],
)
def test_each_outcome_pays_each_spot_against_the_bank(
    api: Api, alice: str, shoe: list[str], outcome: str, nets: dict[str, str], player_net: str
) -> None:
    round_id = open_round(api, shoe)["round_id"]
    for spot in ("player", "banker", "tie"):
        assert bet(api, round_id, spot, "10.00").status_code == 201
    assert api.wallet("alice")["held"] == "30.00"
    settled = deal(api, round_id).json()
    assert settled["status"] == "settled"
    assert settled["outcome"] == outcome
    assert {p["spot"]: p["net"] for p in settled["payouts"]} == nets
    assert settled["net"]["player"] == player_net
    wallet = api.wallet("alice")
    assert wallet["held"] == "0.00"
    assert wallet["last_round"] == {"round_id": round_id, "net": player_net, "commission": "0.00"}
    assert wallet["dealer_points"] == 30  # one point per dollar staked
    balance = api.trial_balance()
    assert balance["total"] == "0.00"
    bank = {a["account"]: a["balance"] for a in balance["accounts"]}["casino:bank"]
    assert bank == (player_net[1:] if player_net.startswith("-") else f"-{player_net}")


def test_the_rule_books_worked_example_deals_card_by_card(api: Api, alice: str) -> None:
    round_id = open_round(api, WORKED_EXAMPLE)["round_id"]
    bet(api, round_id, "banker", "10.00")
    settled = deal(api, round_id).json()
    assert settled["hands"]["player"]["total"] == 3
    assert settled["hands"]["banker"]["total"] == 0
    assert [c[:-1] for c in settled["hands"]["player"]["cards"]] == ["10", "3", "10"]
    assert [c[:-1] for c in settled["hands"]["banker"]["cards"]] == ["K", "10", "Q"]
    assert settled["outcome"] == "player"
    assert api.wallet("alice")["balance"] == "490.00"


def test_the_seed_is_committed_before_bets_and_revealed_at_settlement(api: Api, alice: str) -> None:
    opened = open_round(api)
    assert opened["seed"] is None
    assert len(opened["seed_commitment"]) == 64
    round_id = opened["round_id"]
    bet(api, round_id, "player", "5.00")
    audit_open = api.get(f"/v1/rounds/{round_id}/audit").json()
    assert audit_open["events"][0]["data"]["seed"] is None
    settled = deal(api, round_id).json()
    seed = settled["seed"]
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == opened["seed_commitment"]
    shoe = certification_shoe([], seed, settled["decks"])
    dealt = settled["hands"]["player"]["cards"][:2] + settled["hands"]["banker"]["cards"][:2]
    assert dealt == [shoe[0], shoe[2], shoe[1], shoe[3]]


def test_the_audit_lists_every_bet_card_draw_payout_and_the_settlement(
    api: Api, alice: str
) -> None:
    round_id = open_round(api, WORKED_EXAMPLE)["round_id"]
    bet(api, round_id, "banker", "10.00")
    bet(api, round_id, "tie", "1.00")
    deal(api, round_id)
    trail = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    assert [e["type"] for e in trail] == [
        "Opened", "BetPlaced", "FundsHeld", "BetPlaced", "FundsHeld",
        "CardDealt", "CardDealt", "CardDealt", "CardDealt", "ThirdCardDrawn", "ThirdCardDrawn",
        "PayoutMade", "PayoutMade", "Settled", "RoundSettled", "PointsChanged",
    ]  # fmt: skip
    positions = [e["position"] for e in trail]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    events = [e for e in trail if e["aggregate_id"] == round_id]  # The round's own.
    assert [e["version"] for e in events] == list(range(1, 13))
    wallet = [e for e in trail if e["aggregate_id"] != round_id]
    assert [e["data"]["amount_cents"] for e in wallet[:2]] == [1000, 100]
    assert wallet[-2]["data"]["net_cents"] == -1100  # the player hand won: both stakes lost
    assert events[0]["data"]["seed"] is not None  # revealed once settled
    assert [e["data"]["position"] for e in events[3:9]] == [0, 1, 2, 3, 4, 5]


def test_removing_a_spots_stake_before_the_deal_releases_it(api: Api, alice: str) -> None:
    round_id = open_round(api)["round_id"]
    bet(api, round_id, "banker", "25.00")
    bet(api, round_id, "banker", "5.00")
    assert api.wallet("alice")["held"] == "30.00"
    removed = api.client.delete(
        f"/v1/rounds/{round_id}/bets/banker",
        headers={"Authorization": "Bearer dev-service", "Idempotency-Key": "rm-1"},
    )
    assert removed.status_code == 200
    assert removed.json()["bets"] == []
    assert api.wallet("alice")["held"] == "0.00"
    again = api.client.delete(
        f"/v1/rounds/{round_id}/bets/banker",
        headers={"Authorization": "Bearer dev-service", "Idempotency-Key": "rm-2"},
    )
    assert (again.status_code, again.json()["code"]) == (409, "no_stake_on_spot")


@pytest.mark.parametrize("amount", ["2.50", "0.99", "10.01"])
def test_stakes_are_whole_dollars_of_chips(api: Api, store: Store, alice: str, amount: str) -> None:
    round_id = open_round(api)["round_id"]
    before = state(api, store)
    answer = bet(api, round_id, "player", amount)
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_stake")
    assert state(api, store) == before


def test_a_stake_is_recorded_as_the_fewest_chips(api: Api, store: Store, alice: str) -> None:
    round_id = open_round(api)["round_id"]
    bet(api, round_id, "player", "136.00")
    trail = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    placed = next(e for e in trail if e["type"] == "BetPlaced")
    assert placed["data"]["chips"] == [100, 25, 5, 5, 1]


def test_the_round_total_may_not_pass_the_table_maximum(api: Api, store: Store) -> None:
    api.player("alice", real="5000.00")
    round_id = open_round(api)["round_id"]
    assert bet(api, round_id, "player", "600.00").status_code == 201
    assert bet(api, round_id, "banker", "400.00").status_code == 201  # exactly $1,000
    before = state(api, store)
    answer = bet(api, round_id, "tie", "1.00")
    assert (answer.status_code, answer.json()["code"]) == (409, "above_table_maximum")
    assert answer.json()["maximum"] == "1000.00"
    assert state(api, store) == before


def test_a_round_below_the_table_minimum_cannot_be_dealt(stores: StoreFactory) -> None:
    store = stores.open(GameSettings(house=HouseBaccarat(stake_min_cents=500), test_mode=True))
    with TestClient(create_app(store, load_settings(), background=False)) as client:
        api = Api(client)
        api.player("alice", real="100.00")
        round_id = open_round(api)["round_id"]
        bet(api, round_id, "player", "4.00")
        refused = deal(api, round_id)
        assert (refused.status_code, refused.json()["code"]) == (409, "below_table_minimum")
        bet(api, round_id, "tie", "1.00")
        assert deal(api, round_id).status_code == 200


def test_a_bet_above_available_is_refused(api: Api, store: Store) -> None:
    api.player("alice", real="20.00")
    round_id = open_round(api)["round_id"]
    bet(api, round_id, "player", "15.00")
    before = state(api, store)
    answer = bet(api, round_id, "banker", "6.00")
    assert (answer.status_code, answer.json()["code"]) == (409, "insufficient_funds")
    assert state(api, store) == before


def test_no_bets_after_the_deal_and_no_second_deal(api: Api, store: Store, alice: str) -> None:
    round_id = open_round(api, PLAYER_WINS)["round_id"]
    bet(api, round_id, "player", "10.00")
    deal(api, round_id)
    before = state(api, store)
    late = bet(api, round_id, "player", "10.00")
    assert (late.status_code, late.json()["code"]) == (409, "round_not_open")
    twice = deal(api, round_id)
    assert (twice.status_code, twice.json()["code"]) == (409, "round_not_open")
    assert state(api, store) == before


def test_a_round_with_no_bets_cannot_be_dealt(api: Api, store: Store, alice: str) -> None:
    round_id = open_round(api)["round_id"]
    before = state(api, store)
    answer = deal(api, round_id)
    assert (answer.status_code, answer.json()["code"]) == (409, "no_bets")
    assert state(api, store) == before


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"spot": "dragon", "amount": "5.00"}, 422, "unknown_spot"),
        ({"amount": "5.00"}, 422, "invalid_request"),
        ({"spot": "player", "box": 1, "amount": "5.00"}, 422, "invalid_request"),
        ({"spot": "player", "amount": "-5.00"}, 422, "invalid_amount"),
    ],
)
def test_bad_bets_are_refused(
    api: Api, store: Store, alice: str, body: dict[str, Any], status: int, code: str
) -> None:
    round_id = open_round(api)["round_id"]
    before = state(api, store)
    answer = api.post(f"/v1/rounds/{round_id}/bets", body)
    assert (answer.status_code, answer.json()["code"]) == (status, code)
    assert state(api, store) == before


@pytest.mark.parametrize("round_id", ["not-a-uuid", "6f1d3c8e-2b0a-4f55-9a53-0c6b0d2a7e41"])
def test_unknown_rounds_are_a_404(api: Api, alice: str, round_id: str) -> None:
    assert api.get(f"/v1/rounds/{round_id}").json()["code"] == "unknown_round"
    assert bet(api, round_id, "player", "1.00").status_code == 404


def test_an_unknown_player_cannot_open_a_round(api: Api) -> None:
    answer = api.post("/v1/baccarat/rounds", {"player_id": "ghost", "mode": "real"})
    assert (answer.status_code, answer.json()["code"]) == (404, "unknown_player")


def test_a_shoe_that_the_decks_cannot_hold_is_refused(api: Api, alice: str) -> None:
    answer = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real",
                                              "shoe": ["AS"] * 9})  # fmt: skip
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_shoe")


def test_outside_certification_mode_a_shoe_is_refused(stores: StoreFactory) -> None:
    store = stores.open(GameSettings(test_mode=False))
    with TestClient(create_app(store, load_settings(), background=False)) as client:
        api = Api(client)
        api.player("alice", real="10.00")
        answer = api.post(
            "/v1/baccarat/rounds", {"player_id": "alice", "mode": "real", "shoe": ["9", "K"]}
        )
        assert (answer.status_code, answer.json()["code"]) == (403, "test_mode_disabled")
        assert (
            api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"}).status_code
            == 201
        )


def test_play_money_rounds_never_touch_real_money(api: Api, alice: str) -> None:
    api.deposit("alice", "50.00", mode="play")
    answer = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "play", "shoe": TIE})
    round_id = answer.json()["round_id"]
    bet(api, round_id, "tie", "5.00")
    deal(api, round_id)
    assert api.wallet("alice", "play")["balance"] == "90.00"
    assert api.wallet("alice", "real")["balance"] == "500.00"
    assert api.trial_balance("play")["total"] == "0.00"
