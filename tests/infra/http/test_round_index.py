"""GET /v1/rounds: the rounds of every game, for operators and auditors, through the HTTP
API, on both stores."""

from __future__ import annotations

import datetime
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import AUDITOR, OPERATOR, Api
from tests.infra.http.test_blackjack import bet as blackjack_bet
from tests.infra.http.test_blackjack import deal as blackjack_deal
from tests.infra.http.test_blackjack import open_round as open_blackjack_round
from tests.infra.http.test_p2p import WORKED_EXAMPLE, bet, confirm, dealer, join, sit

IN_PLAY_SHOE = ["10", "6", "7", "9"]  # box 17 against a 6 up: the player must act


def rounds(api: Api, query: str = "", headers: dict[str, str] = AUDITOR) -> Any:
    return api.get(f"/v1/rounds{query}", headers=headers)


@pytest.fixture
def three_rounds(api: Api) -> dict[str, str]:
    """A settled P2P round (the seed's example), a blackjack round in play, and an open
    house round, in that order."""
    dealer(api, points=50)
    api.player("pat", real="100.00")
    table_id = sit(api).json()["table_id"]
    assert join(api).status_code == 201
    p2p = confirm(api, table_id, WORKED_EXAMPLE).json()["round_id"]
    assert bet(api, p2p, "banker", "10.00").status_code == 201
    assert api.post(f"/v1/rounds/{p2p}/deal").status_code == 200
    api.player("alice", real="100.00")
    blackjack = open_blackjack_round(api, IN_PLAY_SHOE)["round_id"]
    assert blackjack_bet(api, blackjack, 1, "10.00").status_code == 201
    assert blackjack_deal(api, blackjack).status_code == 200
    house = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "play"})
    assert house.status_code == 201
    return {"p2p": p2p, "blackjack": blackjack, "house": house.json()["round_id"]}


def test_auditors_and_operators_list_every_round_in_the_order_it_opened(
    api: Api, three_rounds: dict[str, str]
) -> None:
    for headers in (AUDITOR, OPERATOR):
        answer = rounds(api, headers=headers)
        assert answer.status_code == 200, answer.text
        listed = answer.json()["rounds"]
        assert [r["round_id"] for r in listed] == list(three_rounds.values())
        assert answer.json()["next_after"] is None
    p2p, blackjack, house = listed
    assert {k: p2p[k] for k in ("game", "variant", "mode", "status")} == {
        "game": "baccarat",
        "variant": "p2p",
        "mode": "real",
        "status": "settled",
    }
    assert p2p["players"] == [
        {"player_id": "dan", "role": "dealer"},
        {"player_id": "pat", "role": "player"},
    ]
    assert p2p["table_id"] is not None and p2p["ended_at"] > p2p["started_at"]
    assert (blackjack["game"], blackjack["variant"], blackjack["status"]) == (
        "blackjack",
        "2",
        "in_play",
    )
    assert (house["variant"], house["mode"], house["status"], house["ended_at"]) == (
        "house",
        "play",
        "open",
        None,
    )


def test_a_service_key_or_no_key_is_refused(api: Api) -> None:
    refused = rounds(api, headers={"Authorization": "Bearer dev-service"})
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden_role")
    unknown = rounds(api, headers={"Authorization": "Bearer not-a-key"})
    assert (unknown.status_code, unknown.json()["code"]) == (401, "unauthenticated")


def test_rounds_are_found_by_player_by_id_and_by_when_they_began(
    api: Api, three_rounds: dict[str, str]
) -> None:
    def ids(query: str) -> list[str]:
        answer = rounds(api, query)
        assert answer.status_code == 200, answer.text
        return [r["round_id"] for r in answer.json()["rounds"]]

    assert ids("?player_id=dan") == ids("?player_id=pat") == [three_rounds["p2p"]]
    assert ids("?player_id=alice") == [three_rounds["blackjack"], three_rounds["house"]]
    assert ids(f"?round_id={three_rounds['house']}") == [three_rounds["house"]]
    today = datetime.datetime.now(datetime.UTC).date()
    yesterday = today - datetime.timedelta(days=1)
    assert ids(f"?from={today}&to={today}") == list(three_rounds.values())
    assert ids(f"?to={yesterday}") == []
    started = rounds(api).json()["rounds"][1]["started_at"]
    assert ids(f"?from={started.replace('+00:00', 'Z')}") == ids("")[1:]
    assert ids(f"?to={quote(started)}") == ids("")[:2]


def test_pages_of_rounds_follow_on_with_next_after(api: Api, three_rounds: dict[str, str]) -> None:
    first = rounds(api, "?limit=2").json()
    assert [r["round_id"] for r in first["rounds"]] == list(three_rounds.values())[:2]
    assert first["next_after"] == first["rounds"][-1]["position"]
    rest = rounds(api, f"?limit=2&after={first['next_after']}").json()
    assert [r["round_id"] for r in rest["rounds"]] == [three_rounds["house"]]
    assert rest["next_after"] is None


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("?from=yesterday", "from 'yesterday' is not a date YYYY-MM-DD or an ISO timestamp"),
        ("?from=2026-02-02&to=2026-02-01", "from 2026-02-02 is not before to 2026-02-01"),
        ("?limit=501", "limit"),
        ("?limit=0", "limit"),
        ("?player_id=not%20a%20player", "player_id"),
    ],
)
def test_a_bad_filter_is_refused_naming_it(api: Api, query: str, names: str) -> None:
    answer = rounds(api, query)
    assert answer.status_code == 422, answer.text
    assert names in answer.json()["detail"]
