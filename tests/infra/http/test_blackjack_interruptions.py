"""Blackjack rounds interrupted by a disconnect, resumed on reconnect, or finished by the
system after the resume window (rules.md 4), through the HTTP API on both stores.

Shoes are given in dealing order (see tests/infra/test_http_blackjack.py).
"""

import datetime
import json
import threading
from typing import Any

import pytest

from domain.blackjack.round import BlackjackRound
from infra.audit.verify import verify
from infra.config import ConfigError, load_settings
from infra.store.store import Store
from infra.workers import AbandonedRoundWorker
from tests.conftest import Api, StoreFactory, every_store_event
from tests.infra.http.test_blackjack import act, bet, deal, dealt, open_round, played
from tests.infra.http.test_p2p import confirm, seated_table

WINDOW = 600
# Box 1: 10H, 2H (12) against the 6S up; the QD in the hole; then the KC.
TWELVE_AGAINST_SIX = ["10H", "6S", "2H", "QD", "KC"]
HOLE_CARD = "QD"


def later(seconds: int) -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)


def state(api: Api, store: Store) -> Any:
    return api.wallet("alice"), api.trial_balance(), len(every_store_event(store))


def in_play(api: Api, shoe: list[str] = TWELVE_AGAINST_SIX, **kw: Any) -> str:
    round_ = dealt(api, shoe, **kw)
    assert round_["status"] == "in_play", round_
    round_id: str = round_["round_id"]
    return round_id


def round_of(api: Api, round_id: str) -> dict[str, Any]:
    result: dict[str, Any] = api.get(f"/v1/rounds/{round_id}").json()
    return result


def audit_of(api: Api, round_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    return events


@pytest.fixture
def alice(api: Api) -> str:
    return api.player("alice", real="500.00")


# Disconnecting mid-round.


def test_a_disconnect_mid_round_interrupts_it_and_the_stake_stays_held(
    api: Api, alice: str
) -> None:
    round_id = in_play(api)
    answer = api.post("/v1/players/alice/disconnect")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "player_id": "alice",
        "affected_rounds": [{"round_id": round_id, "effect": "interrupted"}],
    }
    round_ = round_of(api, round_id)
    assert (round_["status"], round_["held"], round_["total_stake"]) == (
        "interrupted",
        "10.00",
        "10.00",
    )
    assert (round_["next"], round_["legal_actions"]) == ({"box": 1, "hand": 0}, None)
    assert round_["dealer"]["hole_card_hidden"] is True
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["held"], wallet["available"]) == (
        "500.00",
        "10.00",
        "490.00",
    )
    events = audit_of(api, round_id)
    assert events[-1]["type"] == "Interrupted"
    assert events[-1]["data"] == {"reason": "player alice disconnected"}
    assert HOLE_CARD not in json.dumps([round_, events])
    assert api.post("/v1/players/alice/disconnect").json()["affected_rounds"] == []


def test_every_action_on_an_interrupted_round_is_a_409_naming_why_and_changes_nothing(
    api: Api, store: Store, alice: str
) -> None:
    round_id = in_play(api)
    api.post("/v1/players/alice/disconnect")
    before = state(api, store), round_of(api, round_id)
    refused = [
        act(api, round_id, 1, "hit"),
        act(api, round_id, 1, "stand"),
        bet(api, round_id, 2, "5.00"),
        deal(api, round_id),
        api.post(f"/v1/rounds/{round_id}/repeat-bets"),
        api.client.delete(
            f"/v1/rounds/{round_id}/bets",
            headers={"Authorization": "Bearer dev-service", "Idempotency-Key": "c-1"},
        ),
    ]
    for answer in refused:
        assert (answer.status_code, answer.json()["code"]) == (409, "round_interrupted")
        assert answer.json()["round_id"] == round_id
    assert "player alice disconnected" in refused[0].json()["detail"]
    assert (state(api, store), round_of(api, round_id)) == before


def test_no_other_blackjack_round_starts_while_one_is_interrupted(api: Api, alice: str) -> None:
    waiting = open_round(api, hall="1")["round_id"]  # opened before the disconnect
    assert bet(api, waiting, 1, "1.00").status_code == 201
    round_id = in_play(api)
    api.post("/v1/players/alice/disconnect")
    for answer in (
        api.post("/v1/blackjack/rounds", {"player_id": "alice", "mode": "real", "hall": "vip"}),
        deal(api, waiting),
    ):
        assert (answer.status_code, answer.json()["code"]) == (409, "round_interrupted")
        assert answer.json()["round_id"] == round_id
        assert round_id in answer.json()["detail"]
    assert round_of(api, waiting)["status"] == "open"
    other_mode = {"player_id": "alice", "mode": "play", "hall": "1"}
    assert api.post("/v1/blackjack/rounds", other_mode).status_code == 201
    baccarat = {"player_id": "alice", "mode": "real"}
    assert api.post("/v1/baccarat/rounds", baccarat).status_code == 201


# Reconnecting.


def test_reconnecting_resumes_the_round_and_play_goes_on_to_settlement(
    api: Api, alice: str
) -> None:
    round_id = in_play(api)
    api.post("/v1/players/alice/disconnect")
    answer = api.post("/v1/players/alice/reconnect")
    assert answer.status_code == 200, answer.text
    back = answer.json()["open_rounds"]
    assert [(r["round_id"], r["status"]) for r in back] == [(round_id, "in_play")]
    assert back[0]["legal_actions"]["actions"] == ["hit", "stand"]
    assert back[0]["seed"] is None and HOLE_CARD not in json.dumps(back)
    assert back[0] == round_of(api, round_id)
    assert [e["type"] for e in audit_of(api, round_id)][-2:] == ["Interrupted", "Resumed"]
    settled = played(api, round_id, (1, 0, "stand"))
    assert (settled["status"], settled["net"]["player"]) == ("settled", "10.00")  # 16 + K busts
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["held"]) == ("510.00", "0.00")
    assert api.trial_balance()["total"] == "0.00"
    assert api.post("/v1/players/alice/reconnect").json()["open_rounds"] == []
    assert in_play(api)  # the next round can start


def test_a_disconnect_lists_p2p_and_blackjack_rounds_and_a_reconnect_lists_both(
    api: Api,
) -> None:
    table_id = seated_table(api)  # dan deals, pat plays
    p2p_round = confirm(api, table_id).json()["round_id"]
    api.deposit("dan", "100.00")
    blackjack = open_round(api, TWELVE_AGAINST_SIX, player="dan")["round_id"]
    bet(api, blackjack, 1, "10.00")
    deal(api, blackjack)
    affected = api.post("/v1/players/dan/disconnect").json()["affected_rounds"]
    assert affected == [
        {"round_id": p2p_round, "effect": "continues; the table closes when it ends"},
        {"round_id": blackjack, "effect": "interrupted"},
    ]
    back = api.post("/v1/players/dan/reconnect").json()["open_rounds"]
    assert [(r["game"], r["round_id"], r["status"]) for r in back] == [
        ("baccarat", p2p_round, "open"),
        ("blackjack", blackjack, "in_play"),
    ]


def test_a_round_dealt_after_the_player_disconnected_is_interrupted_at_once(
    api: Api, alice: str
) -> None:
    opened = open_round(api, TWELVE_AGAINST_SIX)["round_id"]
    bet(api, opened, 1, "10.00")
    api.post("/v1/players/alice/disconnect")
    answer = deal(api, opened)
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "interrupted"
    assert api.wallet("alice")["held"] == "10.00"
    back = api.post("/v1/players/alice/reconnect").json()["open_rounds"]
    assert [r["round_id"] for r in back] == [opened]


def test_a_round_settled_at_the_deal_is_not_held_for_a_disconnect(api: Api, alice: str) -> None:
    settled = dealt(api, ["A", "K", "K", "A"])  # a dealer blackjack under a ten
    assert settled["status"] == "settled"
    assert api.post("/v1/players/alice/disconnect").json()["affected_rounds"] == []


# The resume window.


def test_after_the_resume_window_the_system_finishes_with_the_house_defaults(
    api: Api, store: Store, alice: str
) -> None:
    # Box 1: 10, 6 (16); box 2: 9, 9 (18); the dealer A up, 2 in the hole, then a 4: 17.
    shoe = ["10", "9", "A", "6", "9", "2", "4"]
    round_id = in_play(api, shoe, stakes={1: "10.00", 2: "25.00"})
    played(api, round_id, (1, 0, "no_insurance"))
    api.post("/v1/players/alice/disconnect")
    worker = AbandonedRoundWorker(store, WINDOW)
    before = state(api, store)
    assert worker.finish_abandoned_rounds(later(WINDOW - 60)) == []
    assert state(api, store) == before
    assert worker.finish_abandoned_rounds(later(WINDOW + 1)) == [round_id]
    round_ = round_of(api, round_id)
    assert round_["status"] == "settled"
    assert [box["insurance"] for box in round_["boxes"]] == [None, None]
    assert [[h["result"] for h in box["hands"]] for box in round_["payouts"]] == [
        ["lose"],
        ["win"],
    ]
    assert round_["net"] == {"player": "15.00", "casino": "-15.00"}
    decisions = [e["data"] for e in audit_of(api, round_id) if e["type"] == "PlayerActed"]
    assert [(d["box"], d["action"], d["by"]) for d in decisions] == [
        (1, "no_insurance", "player"),
        (2, "no_insurance", "system"),
        (1, "stand", "system"),
        (2, "stand", "system"),
    ]
    settled = [e for e in audit_of(api, round_id) if e["topic"] == "casino:BlackjackRound.Settled"]
    assert settled[0]["data"]["seed"] is not None
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["held"]) == ("515.00", "0.00")
    ledger = api.get("/v1/players/alice/ledger?mode=real").json()["entries"]
    assert [(e["kind"], e["amount"]) for e in ledger if e["round_id"] == round_id] == [
        ("round_result", "15.00")
    ]
    balances = api.trial_balance()
    assert balances["total"] == "0.00"
    assert {a["account"]: a["balance"] for a in balances["accounts"]}["casino:bank"] == "-15.00"
    assert worker.finish_abandoned_rounds(later(WINDOW * 3)) == []
    assert api.post("/v1/players/alice/reconnect").json()["open_rounds"] == []
    assert in_play(api)  # the next round can start


def test_the_resume_window_still_closes_after_a_restart(stores: StoreFactory, store: Store) -> None:
    app = store.app
    app.register_player("alice", "Alice")
    app.deposit("alice", "real", 50_000)
    round_ = app.open_blackjack_round("alice", "real", "2", TWELVE_AGAINST_SIX).result
    assert round_ is not None
    app.place_bet(round_.round_id, "1", 1000)
    app.deal(round_.round_id)
    app.disconnect("alice")
    stores.close(store)
    restarted = stores.open()
    worker = AbandonedRoundWorker(restarted, WINDOW)
    assert worker.finish_abandoned_rounds(later(WINDOW + 1)) == [round_.round_id]
    finished = restarted.app.round(round_.round_id)
    assert isinstance(finished, BlackjackRound)
    assert (finished.status, finished.player_net_cents) == ("settled", 1000)  # stood on 12
    wallet = restarted.app.wallet("alice", "real")
    assert (wallet.balance_cents, wallet.held_cents) == (51_000, 0)
    player = restarted.app.player("alice")
    assert (player.blackjack_rounds, player.interrupted_rounds) == ({}, [])
    report = verify(restarted, None, lambda _: None)
    assert (report.problems, report.rounds) == ([], 1)  # the system's decisions replay too


def test_a_round_resumed_and_interrupted_again_gets_a_whole_new_window(store: Store) -> None:
    app = store.app
    app.register_player("alice", "Alice")
    app.deposit("alice", "real", 50_000)
    round_ = app.open_blackjack_round("alice", "real", "2", TWELVE_AGAINST_SIX).result
    assert round_ is not None
    app.place_bet(round_.round_id, "1", 1000)
    app.deal(round_.round_id)
    app.disconnect("alice")
    app.reconnect("alice")
    between = datetime.datetime.now(datetime.UTC)
    app.disconnect("alice")
    assert app.finish_abandoned_round(round_.round_id, between).result is None
    assert app.round(round_.round_id).status == "interrupted"  # type: ignore[attr-defined]
    worker = AbandonedRoundWorker(store, WINDOW)
    assert worker.finish_abandoned_rounds(later(WINDOW + 1)) == [round_.round_id]


def test_a_disconnect_racing_a_deal_in_another_process_always_holds_the_round(
    stores: StoreFactory, store: Store
) -> None:
    other = stores.open()  # a second process on the same store
    players = [f"p{number}" for number in range(6)]
    rounds = {}
    for player_id in players:
        store.app.register_player(player_id, player_id)
        store.app.deposit(player_id, "real", 10_000)
        opened = store.app.open_blackjack_round(player_id, "real", "2", TWELVE_AGAINST_SIX)
        assert opened.result is not None
        rounds[player_id] = opened.result.round_id
        store.app.place_bet(rounds[player_id], "1", 1000)
    for player_id in players:
        start = threading.Barrier(2)

        def disconnect(player_id: str = player_id, start: threading.Barrier = start) -> None:
            start.wait()
            store.app.disconnect(player_id)

        racer = threading.Thread(target=disconnect)
        racer.start()
        start.wait()
        other.app.deal(rounds[player_id])
        racer.join()
        assert store.app.round(rounds[player_id]).status == "interrupted"  # type: ignore[attr-defined]
        assert store.app.player(player_id).interrupted_rounds == [rounds[player_id]]


def test_the_resume_window_is_configured_and_checked() -> None:
    assert load_settings().resume_window_seconds == WINDOW
    assert load_settings(resume_window_seconds=30).resume_window_seconds == 30
    for bad in (0, 86_401):
        with pytest.raises(ConfigError, match="CASINO_RESUME_WINDOW_SECONDS"):
            load_settings(resume_window_seconds=bad)
