"""American baccarat tables through the HTTP API, on both stores (rules.md 2.2, 4):
fourteen players in one coup, seats, limits, removals, disconnects, the books."""

from __future__ import annotations

from typing import Any

import pytest

from infra.audit.verify import verify
from infra.store.store import Store
from tests.conftest import OPERATOR, Api, every_store_event
from tests.infra.http.helpers import audit_of

SEATS = [str(seat) for seat in range(1, 16) if seat != 13]
PLAYER_WINS = ["10", "K", "3", "10", "10", "Q"]  # player 3 (10, 3, 10), banker 0 (K, 10, Q)
PLAYERS = [f"p{seat:02d}" for seat in range(1, 15)]


def open_table(api: Api, **limits: str) -> str:
    answer = api.post("/v1/tables", {"game": "punto_banco", "mode": "real", **limits})
    assert answer.status_code == 201, answer.text
    table_id: str = answer.json()["table_id"]
    return table_id


def sit(api: Api, table_id: str, player_id: str, seat: str) -> Any:
    return api.post(f"/v1/tables/{table_id}/seats", {"player_id": player_id, "seat": seat})


def open_coup(api: Api, table_id: str, shoe: list[str] | None = None) -> str:
    answer = api.post(f"/v1/tables/{table_id}/coups", {"shoe": shoe} if shoe else None)
    assert answer.status_code == 201, answer.text
    round_id: str = answer.json()["round_id"]
    return round_id


def bet(api: Api, round_id: str, player_id: str, spot: str, amount: str) -> Any:
    return api.post(
        f"/v1/rounds/{round_id}/bets", {"player_id": player_id, "spot": spot, "amount": amount}
    )


def full_table(api: Api, money: str = "1000.00") -> str:
    table_id = open_table(api)
    for player_id, seat in zip(PLAYERS, SEATS, strict=True):
        api.player(player_id, real=money)
        assert sit(api, table_id, player_id, seat).status_code == 201
    return table_id


def books(api: Api, store: Store) -> Any:
    wallets = {p: api.wallet(p) for p in PLAYERS if api.get(f"/v1/players/{p}").status_code == 200}
    return wallets, api.trial_balance(), len(every_store_event(store))


def test_fourteen_players_bet_on_every_spot_and_one_deal_settles_them_all(
    api: Api, store: Store
) -> None:
    table_id = full_table(api)
    round_id = open_coup(api, table_id, PLAYER_WINS)
    for index, player_id in enumerate(PLAYERS):
        for spot, dollars in (("player", 10 + index), ("banker", 20), ("tie", 5)):
            assert bet(api, round_id, player_id, spot, f"{dollars}.00").status_code == 201
    assert api.wallet("p01")["held"] == "35.00"
    dealt = api.post(f"/v1/rounds/{round_id}/deal")
    assert dealt.status_code == 200, dealt.text
    coup = dealt.json()
    assert (coup["status"], coup["outcome"], coup["variant"]) == (
        "settled",
        "player",
        "punto_banco",
    )
    assert coup["hands"]["player"] == {"cards": ["10S", "3S", "10D"], "total": 3}
    assert len(coup["payouts"]) == 42
    for index, player_id in enumerate(PLAYERS):
        net = (10 + index) - 20 - 5  # the player spot wins 1:1, banker and tie lose
        assert coup["net"][player_id] == f"{net:.2f}"
        wallet = api.wallet(player_id)
        assert (wallet["balance"], wallet["held"]) == (f"{1000 + net:.2f}", "0.00")
        assert wallet["dealer_points"] == 10 + index + 25
    casino = -sum((10 + index) - 25 for index in range(14))
    assert coup["casino_net"] == f"{casino:.2f}"
    balance = {a["account"]: a["balance"] for a in api.trial_balance()["accounts"]}
    assert balance["casino:bank"] == f"{casino:.2f}" and api.trial_balance()["total"] == "0.00"
    table = api.get(f"/v1/tables/{table_id}").json()
    assert (table["status"], table["current_round"], table["coups_played"]) == ("open", None, 1)
    assert verify(store, None, lambda _: None).problems == []


def test_a_table_answers_with_its_game_limits_and_seats(api: Api) -> None:
    table_id = open_table(api, bet_min="5.00", bet_max="200.00")
    api.player("ann", real="100.00")
    table = sit(api, table_id, "ann", "14").json()
    assert table["game"] == "punto_banco" and table["status"] == "open"
    assert table["limits"] == {"bet_min": "5.00", "bet_max": "200.00",
                               "bank_min": None, "bank_max": None}  # fmt: skip
    assert table["seats"] == [{"seat": "14", "player_id": "ann", "leaving": False}]
    assert (table["banker"], table["bank_offered_to"]) == (None, None)
    round_id = open_coup(api, table_id)
    assert api.get(f"/v1/tables/{table_id}").json()["current_round"]["round_id"] == round_id


@pytest.mark.parametrize(
    ("seat", "status", "code"),
    [
        ("13", 422, "unknown_seat"),
        ("16", 422, "unknown_seat"),
        ("R1", 422, "unknown_seat"),
    ],
)
def test_a_seat_that_does_not_exist_is_refused(api: Api, seat: str, status: int, code: str) -> None:
    table_id = open_table(api)
    api.player("ann")
    answer = sit(api, table_id, "ann", seat)
    assert (answer.status_code, answer.json()["code"]) == (status, code)
    assert api.get(f"/v1/tables/{table_id}").json()["seats"] == []


def test_a_taken_seat_and_a_second_seat_are_refused(api: Api, store: Store) -> None:
    table_id = open_table(api)
    api.player("ann")
    api.player("bob")
    sit(api, table_id, "ann", "1")
    before = books(api, store)
    for player_id, seat, code in (("bob", "1", "seat_taken"), ("ann", "2", "already_at_table")):
        answer = sit(api, table_id, player_id, seat)
        assert (answer.status_code, answer.json()["code"]) == (409, code)
    assert books(api, store) == before


def test_bad_bets_are_refused_naming_why_and_change_nothing(api: Api, store: Store) -> None:
    table_id = open_table(api, bet_min="5.00", bet_max="100.00")
    api.player("ann", real="50.00")
    api.player("bob", real="500.00")
    sit(api, table_id, "ann", "1")
    round_id = open_coup(api, table_id)
    before = books(api, store)
    for player_id, spot, amount, code in (
        ("bob", "player", "10.00", "not_seated"),
        ("ann", "player", "101.00", "above_table_maximum"),
        ("ann", "player", "2.00", "below_table_minimum"),
        ("ann", "player", "60.00", "insufficient_funds"),
        ("ann", "punto", "10.00", "unknown_spot"),
        ("ann", "player", "10.50", "invalid_stake"),
    ):
        answer = bet(api, round_id, player_id, spot, amount)
        assert answer.json()["code"] == code, (code, answer.text)
    missing = api.post(f"/v1/rounds/{round_id}/bets", {"spot": "player", "amount": "10.00"})
    assert (missing.status_code, missing.json()["code"]) == (422, "invalid_player_id")
    again = api.post(f"/v1/tables/{table_id}/coups")
    assert (again.status_code, again.json()["code"]) == (409, "coup_in_progress")
    assert books(api, store) == before


def test_a_player_takes_back_only_their_own_stake_naming_themselves(api: Api) -> None:
    table_id = open_table(api)
    for name in ("ann", "bob"):
        api.player(name, real="100.00")
        sit(api, table_id, name, "1" if name == "ann" else "2")
    round_id = open_coup(api, table_id)
    bet(api, round_id, "ann", "banker", "10.00")
    bet(api, round_id, "bob", "banker", "20.00")
    nameless = api.client.delete(
        f"/v1/rounds/{round_id}/bets/banker", headers={**api_headers(), "Idempotency-Key": "d1"}
    )
    assert (nameless.status_code, nameless.json()["code"]) == (422, "invalid_player_id")
    taken = api.client.delete(
        f"/v1/rounds/{round_id}/bets/banker?player_id=bob",
        headers={**api_headers(), "Idempotency-Key": "d2"},
    )
    assert taken.status_code == 200, taken.text
    assert [b["player_id"] for b in taken.json()["bets"]] == ["ann"]
    assert (api.wallet("bob")["held"], api.wallet("ann")["held"]) == ("0.00", "10.00")
    other = api.client.delete(
        f"/v1/rounds/{round_id}/bets/banker?player_id=ann",
        headers={**api_headers(), "Idempotency-Key": "d2"},
    )
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reused")


def test_a_disconnected_players_bets_stand_and_their_seat_frees_when_the_coup_ends(
    api: Api,
) -> None:
    table_id = open_table(api)
    for name, seat in (("ann", "1"), ("bob", "2")):
        api.player(name, real="100.00")
        sit(api, table_id, name, seat)
    round_id = open_coup(api, table_id, PLAYER_WINS)
    bet(api, round_id, "ann", "player", "10.00")
    gone = api.post("/v1/players/ann/disconnect").json()
    assert gone["affected_rounds"] == [
        {"round_id": round_id, "effect": "bets stand; the coup goes on"}
    ]
    seats = api.get(f"/v1/tables/{table_id}").json()["seats"]
    assert seats[0] == {"seat": "1", "player_id": "ann", "leaving": True}
    refused = bet(api, round_id, "ann", "tie", "5.00")
    assert (refused.status_code, refused.json()["code"]) == (409, "not_seated")
    api.post(f"/v1/rounds/{round_id}/deal")
    assert api.wallet("ann")["balance"] == "110.00"
    seats = api.get(f"/v1/tables/{table_id}").json()["seats"]
    assert [seat["player_id"] for seat in seats] == ["bob"]


def test_each_players_history_shows_the_coup_with_their_own_bets(api: Api) -> None:
    table_id = open_table(api)
    for name, seat in (("ann", "1"), ("bob", "2")):
        api.player(name, real="100.00")
        sit(api, table_id, name, seat)
    round_id = open_coup(api, table_id, PLAYER_WINS)
    bet(api, round_id, "ann", "player", "10.00")
    bet(api, round_id, "bob", "banker", "20.00")
    api.post(f"/v1/rounds/{round_id}/deal")
    entry = api.get("/v1/players/bob/history").json()["rounds"][0]
    assert (entry["round_id"], entry["net"], entry["role"]) == (round_id, "-20.00", "player")
    assert entry["bets"] == [{"player_id": "bob", "spot": "banker", "amount": "20.00"}]
    assert (entry["balance_before"], entry["balance_after"]) == ("100.00", "80.00")
    assert len(entry["round"]["bets"]) == 2 and entry["round"]["hands"]["banker"]["total"] == 0
    trail = audit_of(api, round_id)
    settled = [e for e in trail if e["type"] == "RoundSettled"]
    assert sorted(e["data"]["net_cents"] for e in settled) == [-2000, 1000]
    reconnected = api.post("/v1/players/ann/reconnect").json()
    assert reconnected["open_rounds"] == []


def test_the_liability_report_holds_the_stakes_of_a_coup_not_yet_dealt(api: Api) -> None:
    table_id = full_table(api, money="100.00")
    round_id = open_coup(api, table_id)
    for player_id in PLAYERS:
        bet(api, round_id, player_id, "banker", "10.00")
    report = api.get("/v1/reports/liability?mode=real", headers=OPERATOR).json()
    assert (report["player_balances"], report["held_in_open_rounds"]) == ("1400.00", "140.00")
    reconnected = api.post("/v1/players/p01/reconnect").json()
    assert [r["round_id"] for r in reconnected["open_rounds"]] == [round_id]


def api_headers() -> dict[str, str]:
    return {"Authorization": "Bearer dev-service"}
