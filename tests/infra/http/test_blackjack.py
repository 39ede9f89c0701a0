"""Blackjack Baden-Baden rounds through the HTTP API, with certification shoes, on both stores.

Shoes are given in dealing order: for one box that is the box's first card, the
dealer's up card, the box's second card, the hole card, then every card drawn.
"""

import hashlib
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from domain.settings import BlackjackHall, BlackjackSettings, GameSettings
from infra.config import ConfigError, load_settings
from infra.http.app import create_app
from infra.store.store import Store
from tests.conftest import Api, StoreFactory, every_store_event


def open_round(
    api: Api, shoe: list[str] | None = None, hall: str = "2", player: str = "alice"
) -> dict[str, Any]:
    body: dict[str, Any] = {"player_id": player, "mode": "real", "hall": hall}
    if shoe is not None:
        body["shoe"] = shoe
    answer = api.post("/v1/blackjack/rounds", body)
    assert answer.status_code == 201, answer.text
    result: dict[str, Any] = answer.json()
    return result


def bet(api: Api, round_id: str, box: int, amount: str) -> Any:
    return api.post(f"/v1/rounds/{round_id}/bets", {"box": box, "amount": amount})


def deal(api: Api, round_id: str) -> Any:
    return api.post(f"/v1/rounds/{round_id}/deal")


def act(api: Api, round_id: str, box: int, action: str, hand: int = 0) -> Any:
    return api.post(f"/v1/rounds/{round_id}/actions", {"box": box, "hand": hand, "action": action})


def dealt(
    api: Api, shoe: list[str], stakes: dict[int, str] | None = None, hall: str = "2"
) -> dict[str, Any]:
    """A round dealt from `shoe` with these stakes per box (default: $10 on box 1)."""
    round_id = open_round(api, shoe, hall)["round_id"]
    for box, amount in (stakes or {1: "10.00"}).items():
        assert bet(api, round_id, box, amount).status_code == 201
    answer = deal(api, round_id)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def played(api: Api, round_id: str, *steps: tuple[int, int, str]) -> dict[str, Any]:
    answer: Any = None
    for box, hand, action in steps:
        answer = act(api, round_id, box, action, hand)
        assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def audit_events(api: Api, round_id: str) -> list[dict[str, Any]]:
    answer = api.get(f"/v1/rounds/{round_id}/audit")
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


def hand_results(round_: dict[str, Any]) -> list[list[tuple[str, str]]]:
    return [[(h["result"], h["net"]) for h in box["hands"]] for box in round_["payouts"]]


def state(api: Api, store: Store) -> Any:
    return api.wallet("alice"), api.trial_balance(), len(every_store_event(store))


def ranks(cards: list[str]) -> list[str]:
    return [card[:-1] for card in cards]


@pytest.fixture
def alice(api: Api) -> str:
    return api.player("alice", real="500.00")


# Payouts.


def test_a_blackjack_pays_3_to_2_rounded_down_on_an_odd_stake(api: Api, alice: str) -> None:
    settled = dealt(api, ["A", "9", "K", "7"], {1: "0.15"}, hall="1")
    assert settled["status"] == "settled"
    assert hand_results(settled) == [[("blackjack", "0.22")]]  # 22.5 cents, rounded down
    assert settled["net"] == {"player": "0.22", "casino": "-0.22"}
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["held"]) == ("500.22", "0.00")
    assert wallet["last_round"]["net"] == "0.22"
    balance = api.trial_balance()
    assert balance["total"] == "0.00"
    assert {a["account"]: a["balance"] for a in balance["accounts"]}["casino:bank"] == "-0.22"


@pytest.mark.parametrize(
    ("choice", "result", "balance"),
    [
        ("even_money", ("even_money", "10.00"), "510.00"),
        ("no_insurance", ("push", "0.00"), "500.00"),
    ],
)
def test_even_money_against_a_dealer_blackjack_taken_or_declined(
    api: Api, alice: str, choice: str, result: tuple[str, str], balance: str
) -> None:
    round_ = dealt(api, ["A", "A", "K", "K"])
    assert round_["legal_actions"] == {
        "box": 1,
        "hand": 0,
        "actions": ["no_insurance", "even_money"],
    }
    assert round_["dealer"]["cards"] == [round_["dealer"]["cards"][0]]  # no peek with an ace up
    settled = played(api, round_["round_id"], (1, 0, choice))
    assert settled["outcome"]["dealer_blackjack"] is True
    assert hand_results(settled) == [[result]]
    assert api.wallet("alice")["balance"] == balance


@pytest.mark.parametrize(
    ("hole", "insurance", "hand", "net"),
    [("K", "10.00", ("lose", "-10.00"), "0.00"), ("7", "-5.00", ("win", "10.00"), "5.00")],
)
def test_insurance_pays_2_to_1_on_a_dealer_blackjack_and_is_lost_otherwise(
    api: Api, alice: str, hole: str, insurance: str, hand: tuple[str, str], net: str
) -> None:
    round_ = dealt(api, ["10", "A", "9", hole])
    insured = played(api, round_["round_id"], (1, 0, "insurance"))
    assert insured["boxes"][0]["insurance"] == "5.00"
    assert api.wallet("alice")["held"] == "15.00"
    settled = played(api, round_["round_id"], (1, 0, "stand"))
    assert settled["payouts"][0]["insurance"] == insurance
    assert hand_results(settled) == [[hand]]
    assert settled["net"]["player"] == net
    assert api.wallet("alice")["held"] == "0.00"


def test_an_insured_box_that_busts_loses_its_insurance_to_a_dealer_blackjack(
    api: Api, alice: str
) -> None:
    round_ = dealt(api, ["10", "A", "6", "K", "9"])  # 10,6 against A up, K in the hole
    played(api, round_["round_id"], (1, 0, "insurance"))
    settled = played(api, round_["round_id"], (1, 0, "hit"))  # 10,6,9: bust
    assert hand_results(settled) == [[("bust", "-10.00")]]
    assert (settled["payouts"][0]["insurance"], settled["net"]["player"]) == ("-5.00", "-15.00")
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["held"]) == ("485.00", "0.00")
    opened = [e for e in audit_events(api, round_["round_id"]) if e["type"] == "Opened"]
    assert opened[0]["data"]["ruleset"] == "baden-baden@2"


def test_a_doubled_hand_loses_to_a_dealer_blackjack_with_an_ace_up(api: Api, alice: str) -> None:
    round_ = dealt(api, ["6", "A", "5", "K", "9"])
    played(api, round_["round_id"], (1, 0, "no_insurance"))
    settled = played(api, round_["round_id"], (1, 0, "double"))
    hand = settled["boxes"][0]["hands"][0]
    assert (ranks(hand["cards"]), hand["doubled"], hand["stake"]) == (
        ["6", "5", "9"],
        True,
        "20.00",
    )
    assert hand_results(settled) == [[("lose", "-20.00")]]
    assert api.wallet("alice")["balance"] == "480.00"


def test_six_cards_under_22_win_at_once(api: Api, alice: str) -> None:
    round_ = dealt(api, ["2", "10", "3", "9", "2", "2", "3", "A"])
    round_id = round_["round_id"]
    played(api, round_id, (1, 0, "hit"), (1, 0, "hit"), (1, 0, "hit"))
    settled = played(api, round_id, (1, 0, "hit"))  # the sixth card: 13, a Charlie
    assert len(settled["boxes"][0]["hands"][0]["cards"]) == 6
    assert hand_results(settled) == [[("charlie", "10.00")]]
    assert settled["outcome"]["dealer_total"] == 19


def test_the_dealer_stands_on_soft_17(api: Api, alice: str) -> None:
    round_ = dealt(api, ["10", "6", "8", "A"])
    settled = played(api, round_["round_id"], (1, 0, "stand"))
    assert ranks(settled["dealer"]["cards"]) == ["6", "A"]
    assert (settled["outcome"]["dealer_total"], hand_results(settled)) == (17, [[("win", "10.00")]])


def test_the_dealer_draws_on_16_and_busts(api: Api, alice: str) -> None:
    round_ = dealt(api, ["10", "6", "7", "10", "K"])
    settled = played(api, round_["round_id"], (1, 0, "stand"))
    assert ranks(settled["dealer"]["cards"]) == ["6", "10", "K"]
    assert settled["outcome"]["dealer_bust"] is True
    assert hand_results(settled) == [[("win", "10.00")]]


# Dealer's check with a ten up.


def test_a_ten_up_dealer_blackjack_ends_the_round_at_the_deal(api: Api, alice: str) -> None:
    # Box 1 holds A, K (pushes); box 2 holds 10, 9 (loses); the dealer K up, A in the hole.
    settled = dealt(api, ["A", "10", "K", "K", "9", "A"], {1: "10.00", 2: "10.00"})
    assert settled["status"] == "settled"
    assert settled["outcome"]["dealer_blackjack"] is True
    assert hand_results(settled) == [[("push", "0.00")], [("lose", "-10.00")]]
    assert settled["legal_actions"] is None
    assert api.wallet("alice")["balance"] == "490.00"


def test_a_ten_up_without_blackjack_plays_on_with_the_hole_card_hidden(
    api: Api, alice: str
) -> None:
    round_ = dealt(api, ["10", "K", "9", "7"])
    assert round_["status"] == "in_play"
    assert ranks(round_["dealer"]["cards"]) == ["K"]
    assert round_["legal_actions"]["actions"] == ["hit", "stand"]


# Splits and doubles.


def test_two_queens_split_into_two_hands_played_in_turn(api: Api, alice: str) -> None:
    round_ = dealt(api, ["Q", "6", "Q", "10", "9", "8", "K"])
    round_id = round_["round_id"]
    assert round_["legal_actions"]["actions"] == ["hit", "stand", "split"]
    split = played(api, round_id, (1, 0, "split"))
    hands = split["boxes"][0]["hands"]
    assert [ranks(h["cards"]) for h in hands] == [["Q", "9"], ["Q", "8"]]
    assert all(h["split"] for h in hands)
    assert split["next"] == {"box": 1, "hand": 0}
    assert split["legal_actions"]["actions"] == ["hit", "stand"]  # no double, no second split
    assert api.wallet("alice")["held"] == "20.00"
    after_first = played(api, round_id, (1, 0, "stand"))
    assert after_first["next"] == {"box": 1, "hand": 1}
    settled = played(api, round_id, (1, 1, "stand"))
    assert hand_results(settled) == [[("win", "10.00"), ("win", "10.00")]]
    assert api.wallet("alice")["balance"] == "520.00"


@pytest.mark.parametrize(
    ("shoe", "action", "reason"),
    [
        (["K", "6", "10", "10"], "split", "only two cards of the same rank can split, not K"),
        (["A", "6", "8", "10"], "double", "a soft 19 cannot double; only a hard 9, 10 or 11 can"),
        (["10", "6", "2", "10"], "double", "double only on a total of 9, 10 or 11, not 12"),
        (["10", "6", "7", "10"], "insurance", "insurance is offered only right after the deal"),
    ],
)
def test_illegal_actions_are_a_409_naming_why_and_change_nothing(
    api: Api, store: Store, alice: str, shoe: list[str], action: str, reason: str
) -> None:
    round_ = dealt(api, shoe)
    before = state(api, store), api.get(f"/v1/rounds/{round_['round_id']}").json()
    answer = act(api, round_["round_id"], 1, action)
    assert (answer.status_code, answer.json()["code"]) == (409, "illegal_action")
    assert reason in answer.json()["detail"]
    assert (state(api, store), api.get(f"/v1/rounds/{round_['round_id']}").json()) == before


def test_a_split_hand_cannot_double(api: Api, alice: str) -> None:
    round_ = dealt(api, ["8", "6", "8", "10", "3", "2"])
    played(api, round_["round_id"], (1, 0, "split"))
    answer = act(api, round_["round_id"], 1, "double")
    assert answer.json()["detail"] == "a split hand cannot double"


# Turns.


def test_five_boxes_play_in_order_and_acting_out_of_turn_is_refused(
    api: Api, store: Store, alice: str
) -> None:
    # Boxes 1-5 get 10, 9, 8, 7, 6 then 7 each; the dealer 5 up, 10 in the hole, then K.
    shoe = ["10", "9", "8", "7", "6", "5", "7", "7", "7", "7", "7", "10", "K"]
    round_ = dealt(api, shoe, dict.fromkeys(range(1, 6), "1.00"))
    round_id = round_["round_id"]
    assert [box["box"] for box in round_["boxes"]] == [1, 2, 3, 4, 5]
    before = state(api, store)
    late = act(api, round_id, 3, "stand")
    assert (late.status_code, late.json()["code"]) == (409, "illegal_action")
    assert late.json()["detail"] == "it is the turn of box 1, hand 0"
    assert state(api, store) == before
    for box in range(1, 6):
        answer = played(api, round_id, (box, 0, "stand"))
        assert answer["next"] == ({"box": box + 1, "hand": 0} if box < 5 else None)
    assert answer["status"] == "settled"
    assert [p["net"] for p in answer["payouts"]] == ["1.00"] * 5  # the dealer busts on 25


def test_no_action_before_the_deal_nor_after_the_settlement(api: Api, alice: str) -> None:
    round_id = open_round(api)["round_id"]
    bet(api, round_id, 1, "10.00")
    early = act(api, round_id, 1, "hit")
    assert (early.status_code, early.json()["code"]) == (409, "illegal_action")
    settled = dealt(api, ["A", "9", "K", "7"])
    late = act(api, settled["round_id"], 1, "stand")
    assert (late.json()["code"], late.json()["detail"]) == ("illegal_action", "the round is over")


def test_a_baccarat_round_takes_no_actions(api: Api, alice: str) -> None:
    answer = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"})
    refused = act(api, answer.json()["round_id"], 1, "hit")
    assert (refused.status_code, refused.json()["code"]) == (409, "illegal_action")


@pytest.mark.parametrize(
    "body",
    [
        {"box": 1, "hand": 0, "action": "surrender"},
        {"box": 6, "action": "hit"},
        {"box": 1, "hand": 2, "action": "hit"},
    ],
)
def test_malformed_actions_are_refused(api: Api, alice: str, body: dict[str, Any]) -> None:
    round_ = dealt(api, ["10", "6", "7", "10"])
    answer = api.post(f"/v1/rounds/{round_['round_id']}/actions", body)
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_request")


def test_a_repeated_action_with_the_same_key_is_applied_once(api: Api, alice: str) -> None:
    round_ = dealt(api, ["2", "10", "3", "9", "2", "2"])
    path = f"/v1/rounds/{round_['round_id']}/actions"
    first = api.post(path, {"box": 1, "hand": 0, "action": "hit"}, key="hit-1")
    again = api.post(path, {"box": 1, "hand": 0, "action": "hit"}, key="hit-1")
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    now = api.get(f"/v1/rounds/{round_['round_id']}").json()
    assert ranks(now["boxes"][0]["hands"][0]["cards"]) == ["2", "3", "2"]


# Holds and funds.


@pytest.mark.parametrize(
    ("shoe", "action"),
    [
        (["6", "9", "5", "10"], "double"),
        (["Q", "9", "Q", "10"], "split"),
        (["10", "A", "9", "7"], "insurance"),
    ],
)
def test_a_double_a_split_or_insurance_needs_funds_to_cover_it(
    api: Api, store: Store, shoe: list[str], action: str
) -> None:
    api.player("alice", real="14.00")
    round_ = dealt(api, shoe)  # $10 held, $4 available: not enough for $10, nor for $5
    before = state(api, store), api.get(f"/v1/rounds/{round_['round_id']}").json()
    answer = act(api, round_["round_id"], 1, action)
    assert (answer.status_code, answer.json()["code"]) == (409, "insufficient_funds")
    assert answer.json()["available"] == "4.00"
    assert (state(api, store), api.get(f"/v1/rounds/{round_['round_id']}").json()) == before


def test_every_stake_is_held_and_the_settlement_releases_it_all(api: Api, alice: str) -> None:
    round_ = dealt(api, ["6", "9", "5", "10", "K"], {1: "10.00"})
    assert api.wallet("alice")["held"] == "10.00"
    settled = played(api, round_["round_id"], (1, 0, "double"))
    assert hand_results(settled) == [[("win", "20.00")]]  # 21 against the dealer's 19
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["held"], wallet["available"]) == ("520.00", "0.00", "520.00")


def test_a_bet_above_available_is_refused(api: Api, store: Store) -> None:
    api.player("alice", real="15.00")
    round_id = open_round(api)["round_id"]
    bet(api, round_id, 1, "10.00")
    before = state(api, store)
    answer = bet(api, round_id, 2, "6.00")
    assert (answer.status_code, answer.json()["code"]) == (409, "insufficient_funds")
    assert state(api, store) == before


# Limits, repeat and cancel.


HALL_LIMITS = [
    ("1", "0.09", "below_table_minimum"),
    ("1", "0.10", None),
    ("1", "10.01", "above_table_maximum"),
    ("2", "0.99", "below_table_minimum"),
    ("2", "100.00", None),
    ("2", "100.01", "above_table_maximum"),
    ("vip", "24.99", "below_table_minimum"),
    ("vip", "1000.00", None),
    ("vip", "1000.01", "above_table_maximum"),
]


def test_each_hall_has_its_limits_per_box(api: Api) -> None:
    api.player("alice", real="5000.00")
    for hall, amount, code in HALL_LIMITS:
        round_ = open_round(api, hall=hall)
        assert round_["limits"]["per"] == "box"
        answer = bet(api, round_["round_id"], 1, amount)
        assert (answer.status_code, answer.json().get("code")) == (
            (201, None) if code is None else (409, code)
        ), (hall, amount)


def test_the_limit_is_per_box_not_per_round(api: Api, alice: str) -> None:
    round_id = open_round(api, hall="1")["round_id"]
    for box in range(1, 6):
        assert bet(api, round_id, box, "10.00").status_code == 201
    again = bet(api, round_id, 3, "0.01")
    assert (again.status_code, again.json()["code"]) == (409, "above_table_maximum")
    assert api.wallet("alice")["held"] == "50.00"
    assert bet(api, round_id, 6, "1.00").json()["code"] == "invalid_box"


def test_repeat_bets_places_the_last_rounds_bets_in_that_hall_again(api: Api, alice: str) -> None:
    dealt(api, ["A", "9", "K", "7", "A", "K"], {1: "5.00", 3: "2.50"})
    second = open_round(api)["round_id"]
    repeated = api.post(f"/v1/rounds/{second}/repeat-bets")
    assert repeated.status_code == 201, repeated.text
    assert repeated.json()["bets"] == [{"box": 1, "amount": "5.00"}, {"box": 3, "amount": "2.50"}]
    twice = api.post(f"/v1/rounds/{second}/repeat-bets")
    assert (twice.status_code, twice.json()["code"]) == (409, "bets_already_placed")
    other_hall = open_round(api, hall="vip")["round_id"]
    none = api.post(f"/v1/rounds/{other_hall}/repeat-bets")
    assert (none.status_code, none.json()["code"]) == (409, "no_previous_bets")


def test_bets_are_removed_per_box_or_all_at_once_before_the_deal(api: Api, alice: str) -> None:
    round_id = open_round(api)["round_id"]
    for box in (1, 2, 4):
        bet(api, round_id, box, "10.00")
    service = {"Authorization": "Bearer dev-service"}
    one = api.client.delete(
        f"/v1/rounds/{round_id}/bets/2", headers={**service, "Idempotency-Key": "d-1"}
    )
    assert (one.status_code, [b["box"] for b in one.json()["bets"]]) == (200, [1, 4])
    assert api.wallet("alice")["held"] == "20.00"
    every = api.client.delete(
        f"/v1/rounds/{round_id}/bets", headers={**service, "Idempotency-Key": "d-2"}
    )
    assert (every.status_code, every.json()["bets"]) == (200, [])
    assert api.wallet("alice")["held"] == "0.00"
    empty = api.client.delete(
        f"/v1/rounds/{round_id}/bets", headers={**service, "Idempotency-Key": "d-3"}
    )
    assert (empty.status_code, empty.json()["code"]) == (409, "no_bets")


def test_no_bet_changes_once_dealt(api: Api, store: Store, alice: str) -> None:
    round_ = dealt(api, ["10", "6", "7", "10"])
    round_id = round_["round_id"]
    before = state(api, store)
    assert bet(api, round_id, 2, "5.00").json()["code"] == "round_not_open"
    assert deal(api, round_id).json()["code"] == "round_not_open"
    removed = api.client.delete(
        f"/v1/rounds/{round_id}/bets/1",
        headers={"Authorization": "Bearer dev-service", "Idempotency-Key": "d-1"},
    )
    assert removed.json()["code"] == "round_not_open"
    assert state(api, store) == before


# The hole card and the seed.


def test_the_hole_card_is_in_no_answer_while_the_round_is_in_play(api: Api, alice: str) -> None:
    round_ = dealt(api, ["10H", "6S", "2H", "QD", "3H", "KC"])
    round_id = round_["round_id"]
    hit = act(api, round_id, 1, "hit")  # 15
    answers = [round_, hit.json(), api.get(f"/v1/rounds/{round_id}").json()]
    audit = api.get(f"/v1/rounds/{round_id}/audit").json()
    for answer in [*answers, audit]:
        assert "QD" not in json.dumps(answer)
    assert audit["events"][0]["data"]["seed"] is None
    hole = next(e for e in audit["events"] if e["type"] == "HoleCardDealt")
    assert hole["data"] == {"hole_card": None, "position": 3}
    settled = played(api, round_id, (1, 0, "stand"))
    assert settled["dealer"]["cards"] == ["6S", "QD", "KC"]
    revealed = api.get(f"/v1/rounds/{round_id}/audit").json()
    assert next(e for e in revealed["events"] if e["type"] == "HoleCardDealt")["data"] == {
        "hole_card": "QD",
        "position": 3,
    }


def test_the_audit_lists_every_bet_card_decision_draw_and_payout(api: Api, alice: str) -> None:
    round_ = dealt(api, ["Q", "6", "Q", "10", "9", "8", "K"])
    played(api, round_["round_id"], (1, 0, "split"), (1, 0, "stand"), (1, 1, "stand"))
    trail = api.get(f"/v1/rounds/{round_['round_id']}/audit").json()["events"]
    assert [e["type"] for e in trail if e["aggregate_id"] != round_["round_id"]] == [
        "FundsHeld", "FundsHeld", "RoundSettled"  # the stake, the split's, the result
    ]  # fmt: skip
    events = [e for e in trail if e["aggregate_id"] == round_["round_id"]]
    assert [e["type"] for e in events] == [
        "Opened", "BetPlaced", "CardDealt", "CardDealt", "CardDealt", "HoleCardDealt",
        "PlayerActed", "PlayerActed", "PlayerActed", "HoleCardRevealed", "DealerDrew",
        "PayoutMade", "Settled",
    ]  # fmt: skip
    assert events[6]["data"]["added_stake_cents"] == 1000
    assert events[6]["data"]["by"] == "player"
    assert events[-1]["data"]["seed"] == events[0]["data"]["seed"] is not None


def test_the_seed_is_revealed_at_settlement_and_matches_the_commitment(
    api: Api, alice: str
) -> None:
    opened = open_round(api)
    assert opened["seed"] is None and len(opened["seed_commitment"]) == 64
    bet(api, opened["round_id"], 1, "10.00")
    round_ = deal(api, opened["round_id"]).json()
    while round_["status"] == "in_play":
        assert round_["seed"] is None
        turn = round_["legal_actions"]
        choice = "no_insurance" if "no_insurance" in turn["actions"] else "stand"
        round_ = act(api, round_["round_id"], turn["box"], choice, turn["hand"]).json()
    assert hashlib.sha256(bytes.fromhex(round_["seed"])).hexdigest() == opened["seed_commitment"]


# Opening rounds and configuration.


def test_an_unknown_hall_is_refused(api: Api, alice: str) -> None:
    answer = api.post("/v1/blackjack/rounds", {"player_id": "alice", "mode": "real", "hall": "3"})
    assert (answer.status_code, answer.json()["code"]) == (422, "unknown_hall")


def test_outside_certification_mode_a_shoe_is_refused(stores: StoreFactory) -> None:
    store = stores.open(GameSettings(test_mode=False))
    with TestClient(create_app(store, load_settings(), background=False)) as client:
        api = Api(client)
        api.player("alice", real="10.00")
        body = {"player_id": "alice", "mode": "real", "hall": "1", "shoe": ["A", "K"]}
        answer = api.post("/v1/blackjack/rounds", body)
        assert (answer.status_code, answer.json()["code"]) == (403, "test_mode_disabled")


def test_halls_come_from_configuration(stores: StoreFactory) -> None:
    settings = load_settings(blackjack_halls='{"low": {"min": "0.05", "max": "1.00"}}')
    assert settings.games().blackjack.halls == {"low": BlackjackHall("low", 5, 100)}
    assert load_settings().games().blackjack == BlackjackSettings()
    with pytest.raises(ConfigError, match="CASINO_BLACKJACK_HALLS"):
        load_settings(blackjack_halls='{"1": {"min": "5.00", "max": "1.00"}}')
    store = stores.open(GameSettings(blackjack=settings.games().blackjack, test_mode=True))
    with TestClient(create_app(store, settings, background=False)) as client:
        api = Api(client)
        api.player("alice", real="10.00")
        round_ = open_round(api, hall="low")
        assert bet(api, round_["round_id"], 1, "1.01").json()["code"] == "above_table_maximum"


def test_play_money_rounds_never_touch_real_money(api: Api, alice: str) -> None:
    api.deposit("alice", "50.00", mode="play")
    body = {"player_id": "alice", "mode": "play", "hall": "2", "shoe": ["A", "9", "K", "7"]}
    round_id = api.post("/v1/blackjack/rounds", body).json()["round_id"]
    bet(api, round_id, 1, "10.00")
    assert deal(api, round_id).json()["net"]["player"] == "15.00"
    assert api.wallet("alice", "play")["balance"] == "65.00"
    assert api.wallet("alice", "real")["balance"] == "500.00"
    assert api.trial_balance("play")["total"] == "0.00"


def test_a_settled_round_is_in_the_players_game_history(api: Api, alice: str) -> None:
    settled = dealt(api, ["A", "9", "K", "7"])
    history = api.get("/v1/players/alice/history").json()["rounds"]
    assert [entry["round_id"] for entry in history] == [settled["round_id"]]
    assert history[0]["net"] == "15.00"
    assert history[0]["round"]["game"] == "blackjack"
    assert history[0]["round"]["dealer"]["cards"] == settled["dealer"]["cards"]


def test_the_openapi_document_describes_the_blackjack_routes(api: Api) -> None:
    paths = api.client.get("/openapi.json").json()["paths"]
    assert "post" in paths["/v1/blackjack/rounds"]
    assert "post" in paths["/v1/rounds/{round_id}/actions"]
    assert "post" in paths["/v1/rounds/{round_id}/repeat-bets"]
    assert "delete" in paths["/v1/rounds/{round_id}/bets"]


def test_cancelling_every_bet_works_for_baccarat_too(api: Api, alice: str) -> None:
    round_id = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"}).json()[
        "round_id"
    ]
    api.post(f"/v1/rounds/{round_id}/bets", {"spot": "banker", "amount": "5.00"})
    api.post(f"/v1/rounds/{round_id}/bets", {"spot": "tie", "amount": "1.00"})
    cancelled = api.client.delete(
        f"/v1/rounds/{round_id}/bets",
        headers={"Authorization": "Bearer dev-service", "Idempotency-Key": "c-1"},
    )
    assert (cancelled.status_code, cancelled.json()["bets"]) == (200, [])
    assert api.wallet("alice")["held"] == "0.00"
