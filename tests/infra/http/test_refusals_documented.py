"""Every refusal a route gives is in its OpenAPI responses: the contract client holds
each answer to the document (tests/contract.py), so a refusal no test reached could
be missing from it. These reach the ones found missing: `not_seated` from the round
routes that name a player, on a one-player round someone else plays."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import SERVICE, Api
from tests.infra.http import test_baccarat as house
from tests.infra.http import test_blackjack as blackjack

# A blackjack box the dealer has not finished with: 10 and 6 against a 9 up.
IN_PLAY = ["10", "9", "6", "7"]


def refusal(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json()["code"]


def delete(api: Api, path: str) -> Any:
    return api.client.delete(path, headers={**SERVICE, "Idempotency-Key": path})


@pytest.fixture
def players(api: Api) -> None:
    api.player("alice", real="100.00")
    api.player("bob", real="100.00")


@pytest.mark.usefixtures("players")
def test_taking_back_someone_elses_stake_is_409_not_seated(api: Api) -> None:
    round_id = house.open_round(api, house.BANKER_WINS)["round_id"]
    assert house.bet(api, round_id, "banker", "10.00").status_code == 201
    for path in (f"/v1/rounds/{round_id}/bets/banker", f"/v1/rounds/{round_id}/bets"):
        assert refusal(delete(api, f"{path}?player_id=bob")) == (409, "not_seated"), path
    assert api.get(f"/v1/rounds/{round_id}").json()["bets"] != []


@pytest.mark.usefixtures("players")
def test_a_decision_in_someone_elses_round_is_409_not_seated(api: Api) -> None:
    round_id = blackjack.open_round(api, IN_PLAY)["round_id"]
    assert blackjack.bet(api, round_id, 1, "10.00").status_code == 201
    assert blackjack.deal(api, round_id).status_code == 200
    body = {"box": 1, "hand": 0, "action": "stand", "player_id": "bob"}
    answer = api.post(f"/v1/rounds/{round_id}/actions", body)
    assert refusal(answer) == (409, "not_seated")
    assert api.get(f"/v1/rounds/{round_id}").json()["status"] == "in_play"


def test_the_round_routes_naming_a_player_list_not_seated(api: Api) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    for path, method in (
        ("/v1/rounds/{round_id}/bets", "post"),
        ("/v1/rounds/{round_id}/bets", "delete"),
        ("/v1/rounds/{round_id}/bets/{spot_or_box}", "delete"),
        ("/v1/rounds/{round_id}/actions", "post"),
        ("/v1/rounds/{round_id}/banco", "post"),
    ):
        conflict = paths[path][method]["responses"]["409"]["content"]["application/problem+json"]
        assert "not_seated" in conflict["schema"]["properties"]["code"]["enum"], (method, path)
