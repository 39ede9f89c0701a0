"""Players and wallets through the real HTTP app, on both stores."""

import datetime
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from infra.config import load_settings
from infra.http.app import create_app
from infra.store.store import Store
from tests.conftest import (
    AUDITOR,
    OPERATOR,
    SERVICE,
    Api,
    StoreFactory,
    eventually,
    every_store_event,
)


def state(api: Api, store: Store) -> Any:
    """Everything a bad request must leave as it was."""
    return (
        api.wallet("alice"),
        api.wallet("alice", "play"),
        api.trial_balance(),
        len(every_store_event(store)),
    )


@pytest.fixture
def alice(api: Api) -> str:
    return api.player("alice", real="100.00")


def test_a_walk_through_create_deposit_read_withdraw_and_balance(api: Api) -> None:
    created = api.post("/v1/players", {"player_id": "alice", "display_name": "Alice"})
    assert created.status_code == 201
    assert created.json() == {"player_id": "alice", "display_name": "Alice"}
    deposit = api.deposit("alice", "25.50")
    assert deposit["wallet"] == {
        "player_id": "alice",
        "mode": "real",
        "balance": "25.50",
        "held": "0.00",
        "available": "25.50",
        "dealer_points": 0,
        "last_round": None,
        "bonus": None,
    }
    withdrawal = api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "0.50"})
    assert withdrawal.status_code == 201
    assert withdrawal.json()["wallet"]["balance"] == "25.00"
    ledger = api.get("/v1/players/alice/ledger?mode=real").json()["entries"]
    assert [(e["kind"], e["amount"], e["balance_after"]) for e in ledger] == [
        ("deposit", "25.50", "25.50"),
        ("withdrawal", "-0.50", "25.00"),
    ]
    assert ledger[0]["transaction_id"] == deposit["transaction_id"]
    assert api.trial_balance() == {
        "mode": "real",
        "accounts": [
            {"account": "cashier", "balance": "-25.00"},
            {"account": "player:alice", "balance": "25.00"},
        ],
        "total": "0.00",
    }


def test_the_ledger_pages_with_limit_and_after(api: Api, alice: str) -> None:
    for amount in ("1.00", "2.00", "3.00"):
        api.deposit(alice, amount)
    first = api.get("/v1/players/alice/ledger?mode=real&limit=2").json()
    rest = api.get(f"/v1/players/alice/ledger?mode=real&after={first['next_after']}").json()
    amounts = [e["amount"] for e in first["entries"] + rest["entries"]]
    assert amounts == ["100.00", "1.00", "2.00", "3.00"]
    assert rest["next_after"] is None


@pytest.mark.parametrize(
    "amount",
    ["-5.00", "0", "0.00", "ten", "1.005", "100000000000000.00", 10, 10.5, None, "", "1e2"],
)
def test_bad_amounts_are_refused_and_change_nothing(
    api: Api, store: Store, alice: str, amount: Any
) -> None:
    before = state(api, store)
    for route in ("deposits", "withdrawals"):
        answer = api.post(f"/v1/players/alice/{route}", {"mode": "real", "amount": amount})
        assert answer.status_code == 422
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.json()["code"] == "invalid_amount"
    assert state(api, store) == before


def test_an_unknown_player_is_a_404_that_changes_nothing(
    api: Api, store: Store, alice: str
) -> None:
    before = state(api, store)
    answer = api.post("/v1/players/bob/deposits", {"mode": "real", "amount": "1.00"})
    assert (answer.status_code, answer.json()["code"]) == (404, "unknown_player")
    assert api.get("/v1/players/bob/wallets/real").status_code == 404
    assert state(api, store) == before


def test_an_unknown_mode_is_refused(api: Api, store: Store, alice: str) -> None:
    before = state(api, store)
    answer = api.post("/v1/players/alice/deposits", {"mode": "bonus", "amount": "1.00"})
    assert (answer.status_code, answer.json()["code"]) == (422, "unknown_mode")
    assert api.get("/v1/players/alice/wallets/bonus").json()["code"] == "unknown_mode"
    assert state(api, store) == before


@pytest.mark.parametrize("player_id", ["bad id", "x" * 65, "semi;colon"])
def test_malformed_player_ids_are_refused(
    api: Api, store: Store, alice: str, player_id: str
) -> None:
    before = state(api, store)
    created = api.post("/v1/players", {"player_id": player_id, "display_name": "X"})
    assert (created.status_code, created.json()["code"]) == (422, "invalid_player_id")
    deposit = api.post(f"/v1/players/{player_id}/deposits", {"mode": "real", "amount": "1.00"})
    assert (deposit.status_code, deposit.json()["code"]) == (422, "invalid_player_id")
    assert state(api, store) == before


def test_a_withdrawal_above_available_is_a_409_with_the_shortfall(
    api: Api, store: Store, alice: str
) -> None:
    before = state(api, store)
    answer = api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "100.01"})
    assert answer.status_code == 409
    assert answer.json()["code"] == "insufficient_funds"
    assert answer.json()["shortfall"] == "0.01"
    assert state(api, store) == before


def test_a_missing_idempotency_key_is_a_400(api: Api, store: Store, alice: str) -> None:
    before = state(api, store)
    answer = api.client.post(
        "/v1/players/alice/deposits", json={"mode": "real", "amount": "1.00"}, headers=SERVICE
    )
    assert (answer.status_code, answer.json()["code"]) == (400, "idempotency_key_missing")
    too_long = api.post(
        "/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"}, key="k" * 129
    )
    assert (too_long.status_code, too_long.json()["code"]) == (400, "invalid_idempotency_key")
    assert state(api, store) == before


def test_repeating_a_request_returns_the_first_answer_and_changes_nothing(
    api: Api, store: Store, alice: str
) -> None:
    body = {"mode": "real", "amount": "5.00"}
    first = api.post("/v1/players/alice/deposits", body, key="deposit-1")
    after_first = state(api, store)
    again = api.post(
        "/v1/players/alice/deposits", {"amount": "5.00", "mode": "real"}, key="deposit-1"
    )
    assert (again.status_code, again.json()) == (first.status_code, first.json())
    assert again.headers["idempotent-replayed"] == "true"
    assert state(api, store) == after_first
    assert api.wallet("alice")["balance"] == "105.00"


def test_a_reused_key_with_another_body_is_a_422(api: Api, store: Store, alice: str) -> None:
    api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "5.00"}, key="deposit-1")
    before = state(api, store)
    answer = api.post(
        "/v1/players/alice/deposits", {"mode": "real", "amount": "6.00"}, key="deposit-1"
    )
    assert (answer.status_code, answer.json()["code"]) == (422, "idempotency_key_reused")
    assert state(api, store) == before


def test_a_key_past_its_retention_is_a_422_and_changes_nothing(
    api: Api, store: Store, alice: str
) -> None:
    body = {"mode": "real", "amount": "5.00"}
    api.post("/v1/players/alice/deposits", body, key="deposit-1")
    before = state(api, store)
    moved = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=91)
    store.app.clock = lambda: moved
    answer = api.post("/v1/players/alice/deposits", body, key="deposit-1")
    assert (answer.status_code, answer.json()["code"]) == (422, "idempotency_key_expired")
    assert "90 days" in answer.json()["detail"]
    assert state(api, store) == before


def test_stored_answers_survive_a_restart(stores: StoreFactory, api: Api, alice: str) -> None:
    first = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "5.00"}, key="d-1")
    restarted = stores.open()
    with TestClient(create_app(restarted, load_settings(), background=False)) as client:
        again = Api(client).post(
            "/v1/players/alice/deposits", {"mode": "real", "amount": "5.00"}, key="d-1"
        )
        assert again.json() == first.json()
        assert Api(client).wallet("alice")["balance"] == "105.00"


def test_keys_are_scoped_to_the_caller(api: Api, alice: str) -> None:
    body = {"mode": "real", "amount": "5.00"}
    api.post("/v1/players/alice/deposits", body, key="same")
    api.post("/v1/players/alice/deposits", body, key="same", headers=OPERATOR)
    assert api.wallet("alice")["balance"] == "110.00"


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 401, "unauthenticated"),
        ({"Authorization": "Bearer nope"}, 401, "unauthenticated"),
        ({"Authorization": "Basic dev-service"}, 401, "unauthenticated"),
        (AUDITOR, 403, "forbidden_role"),
    ],
)
def test_commands_need_a_service_or_operator_key(
    api: Api, store: Store, alice: str, headers: dict[str, str], status: int, code: str
) -> None:
    before = state(api, store)
    answer = api.client.post(
        "/v1/players/alice/deposits",
        json={"mode": "real", "amount": "1.00"},
        headers={"Idempotency-Key": "k", **headers},
    )
    assert (answer.status_code, answer.json()["code"]) == (status, code)
    if status == 401:  # a refused authentication is a significant event (rules.md 7)
        # Written by a thread of its own, just after the answer (infra/significant.py).
        events = eventually(lambda: every_store_event(store), lambda e: len(e) > before[-1])
        [refused] = events[before[-1] :]
        assert (type(refused).__qualname__, refused.kind) == (
            "SignificantEvent.Created",
            "authentication_refused",
        )
        before = (*before[:-1], before[-1] + 1)
    assert state(api, store) == before


def test_reports_are_for_operators_and_auditors(api: Api, alice: str) -> None:
    assert api.get("/v1/reports/trial-balance", headers=SERVICE).status_code == 403
    assert api.get("/v1/reports/trial-balance", headers=AUDITOR).status_code == 200
    assert api.get("/v1/reports/liability", headers=OPERATOR).json() == {
        "mode": "real",
        "player_balances": "100.00",
        "held_in_open_rounds": "0.00",
        "available_to_players": "100.00",
        "wallets": 1,
    }


def test_only_operators_adjust_dealer_points(api: Api, store: Store, alice: str) -> None:
    body = {"mode": "real", "change": 30, "reason": "loyalty"}
    refused = api.post("/v1/players/alice/dealer-points/adjustments", body)
    assert refused.status_code == 403
    done = api.post("/v1/players/alice/dealer-points/adjustments", body, headers=OPERATOR)
    assert (done.status_code, done.json()) == (201, {"player_id": "alice", "points": 30})
    points = api.get("/v1/players/alice/dealer-points?mode=real").json()
    assert points["points"] == 30
    assert [(e["change"], e["role"], e["reason"]) for e in points["entries"]] == [
        (30, "operator", "loyalty")
    ]
    assert api.wallet("alice")["dealer_points"] == 30


@pytest.mark.parametrize("body", [[1, 2], "text", 5, None])
def test_a_body_that_is_not_an_object_is_refused(
    api: Api, store: Store, alice: str, body: Any
) -> None:
    before = state(api, store)
    answer = api.client.post(
        "/v1/players/alice/deposits",
        content=json.dumps(body),
        headers={**SERVICE, "Idempotency-Key": "k", "Content-Type": "application/json"},
    )
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_body")
    assert state(api, store) == before


def test_malformed_json_is_a_400(api: Api, store: Store, alice: str) -> None:
    answer = api.client.post(
        "/v1/players/alice/deposits",
        content=b'{"mode": "real", "amount": ',
        headers={**SERVICE, "Idempotency-Key": "k", "Content-Type": "application/json"},
    )
    assert (answer.status_code, answer.json()["code"]) == (400, "malformed_json")


def test_a_ten_megabyte_body_is_refused_unread(api: Api, store: Store, alice: str) -> None:
    before = state(api, store)
    padding = "x" * (10 * 1024 * 1024)
    answer = api.client.post(
        "/v1/players/alice/deposits",
        content=json.dumps({"mode": "real", "amount": "1.00", "padding": padding}),
        headers={**SERVICE, "Idempotency-Key": "k", "Content-Type": "application/json"},
    )
    assert (answer.status_code, answer.json()["code"]) == (413, "payload_too_large")
    assert state(api, store) == before


def test_a_chunked_body_over_the_limit_is_refused(api: Api, store: Store, alice: str) -> None:
    before = state(api, store)

    def chunks() -> Any:
        yield b'{"mode": "real", "amount": "1.00", "padding": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'

    answer = api.client.post(
        "/v1/players/alice/deposits",
        content=chunks(),
        headers={**SERVICE, "Idempotency-Key": "k", "Content-Type": "application/json"},
    )
    assert (answer.status_code, answer.json()["code"]) == (413, "payload_too_large")
    assert state(api, store) == before


def test_a_chunked_body_over_the_limit_is_refused_where_no_body_is_read_as_json(
    api: Api, store: Store, alice: str
) -> None:
    # Not declared JSON, on a route without a body: read only for the request's
    # fingerprint, where the cut-off body used to surface as a 500.
    before = state(api, store)
    answer = api.client.post(
        "/v1/players/alice/disconnect",
        content=(b"x" * 1024 for _ in range(100)),
        headers={**SERVICE, "Idempotency-Key": "k"},
    )
    assert (answer.status_code, answer.json()["code"]) == (413, "payload_too_large")
    assert state(api, store) == before


def test_unknown_fields_are_refused(api: Api, alice: str) -> None:
    answer = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00", "x": 1})
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_request")


def test_the_openapi_document_describes_every_route(api: Api) -> None:
    paths = api.client.get("/openapi.json").json()["paths"]
    for path in (
        "/v1/players",
        "/v1/players/{player_id}/deposits",
        "/v1/players/{player_id}/withdrawals",
        "/v1/players/{player_id}/wallets/{mode}",
        "/v1/players/{player_id}/ledger",
        "/v1/players/{player_id}/dealer-points",
        "/v1/players/{player_id}/dealer-points/adjustments",
        "/v1/reports/trial-balance",
        "/v1/reports/liability",
    ):
        assert path in paths


def test_a_trailing_newline_makes_an_amount_or_id_invalid(
    api: Api, store: Store, alice: str
) -> None:
    before = state(api, store)
    amount = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "10.00\n"})
    assert (amount.status_code, amount.json()["code"]) == (422, "invalid_amount")
    player = api.post("/v1/players/alice%0A/deposits", {"mode": "real", "amount": "1.00"})
    assert (player.status_code, player.json()["code"]) == (422, "invalid_player_id")
    assert state(api, store) == before


def test_a_ledger_cursor_beyond_any_version_is_refused(api: Api, alice: str) -> None:
    answer = api.get("/v1/players/alice/ledger?after=99999999999999999999")
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_request")


def test_deposits_stop_at_the_balance_ceiling_and_every_read_still_answers(
    api: Api, store: Store
) -> None:
    # Given a wallet filled to its ceiling by the largest deposit there is
    # (before the ceiling, ~92,000 of these overflowed the projector),
    api.player("alice")
    api.deposit("alice", "1000000000000.00")
    before = state(api, store)
    # when one more cent is deposited,
    answer = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "0.01"})
    # then it is refused, naming the limit and what is allowed, and changes nothing;
    assert answer.status_code == 409
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "balance_limit_exceeded"
    assert (answer.json()["limit"], answer.json()["allowed"]) == ("1000000000000.00", "0.00")
    assert state(api, store) == before
    # and the ledger and the trial balance of both modes still read.
    assert api.get("/v1/players/alice/ledger?mode=real").status_code == 200
    assert api.trial_balance("real")["total"] == api.trial_balance("play")["total"] == "0.00"


def test_a_bet_whose_largest_payout_could_pass_the_ceiling_is_refused(api: Api) -> None:
    # Given a wallet at its ceiling and a house round,
    api.player("alice")
    api.deposit("alice", "1000000000000.00")
    opened = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"})
    round_id = opened.json()["round_id"]
    # when a bet is placed, the tie it could win would pass the ceiling: refused,
    answer = api.post(f"/v1/rounds/{round_id}/bets", {"spot": "tie", "amount": "1"})
    assert answer.status_code == 409
    assert answer.json()["code"] == "balance_limit_exceeded"
    # and nothing is held.
    assert api.wallet("alice")["held"] == "0.00"
