"""P2P baccarat through the HTTP API: the seed's worked example, eligibility, limits,
matching, confirmation, auto-confirm and leaving, on both stores."""

from typing import Any

import pytest

from infra.store.store import Store
from tests.conftest import OPERATOR, Api, every_store_event

WORKED_EXAMPLE = ["10", "K", "3", "10", "10", "Q"]  # rules.md 2.1, in dealing order
PLAYER_WINS = ["9", "K", "K", "K"]
WORST_CASE = {"I": "901.75", "II": "1803.50", "III": "3156.13"}
POINTS_MIN = {"I": 20, "II": 50, "III": 100}
LIMITS = {"I": (2, 100), "II": (5, 200), "III": (25, 350)}


def dealer(api: Api, player_id: str = "dan", money: str = "2000.00", points: int = 100) -> str:
    api.player(player_id, real=money)
    answer = api.post(
        f"/v1/players/{player_id}/dealer-points/adjustments",
        {"mode": "real", "change": points, "reason": "qualifies to deal"},
        headers=OPERATOR,
    )
    assert answer.status_code == 201, answer.text
    return player_id


def sit(api: Api, player_id: str = "dan", table_type: str = "II", auto: bool = False) -> Any:
    return api.post(
        "/v1/p2p/dealers",
        {"player_id": player_id, "mode": "real", "table_type": table_type, "auto_confirm": auto},
    )


def join(api: Api, player_id: str = "pat", table_type: str = "II") -> Any:
    return api.post(
        "/v1/p2p/players", {"player_id": player_id, "mode": "real", "table_type": table_type}
    )


def confirm(api: Api, table_id: str, shoe: list[str] | None = None) -> Any:
    return api.post(f"/v1/p2p/tables/{table_id}/confirm", {"shoe": shoe} if shoe else None)


def bet(api: Api, round_id: str, spot: str, amount: str) -> Any:
    return api.post(f"/v1/rounds/{round_id}/bets", {"spot": spot, "amount": amount})


def seated_table(api: Api, table_type: str = "II", auto: bool = False) -> str:
    dealer(api, money="5000.00" if table_type == "III" else "2000.00")
    api.player("pat", real="1000.00")
    table_id: str = sit(api, table_type=table_type, auto=auto).json()["table_id"]
    assert join(api, table_type=table_type).status_code == 201
    return table_id


def test_the_seeds_worked_example_end_to_end(api: Api) -> None:
    dealer(api, points=50)
    api.player("pat", real="100.00")
    sat = sit(api)
    assert sat.status_code == 201
    assert sat.json()["status"] == "waiting"
    table_id = sat.json()["table_id"]
    joined = join(api)
    assert joined.status_code == 201
    assert joined.json()["table_id"] == table_id
    assert joined.json()["dealer"] == {"player_id": "dan", "display_name": "dan"}
    opened = confirm(api, table_id, WORKED_EXAMPLE)
    assert opened.status_code == 201
    round_ = opened.json()
    assert (round_["status"], round_["variant"], len(round_["seed_commitment"])) == (
        "open",
        "p2p",
        64,
    )
    assert api.wallet("dan")["held"] == "1803.50"
    assert bet(api, round_["round_id"], "banker", "10.00").status_code == 201
    settled = api.post(f"/v1/rounds/{round_['round_id']}/deal").json()
    assert settled["outcome"] == "player"
    assert (settled["hands"]["player"]["total"], settled["hands"]["banker"]["total"]) == (3, 0)
    assert settled["commission"] == "0.18"
    assert settled["net"] == {"player": "-10.00", "dealer": "9.82", "casino": "0.18"}
    pat, dan = api.wallet("pat"), api.wallet("dan")
    assert (pat["balance"], pat["dealer_points"]) == ("90.00", 10)
    assert pat["last_round"] == {
        "round_id": round_["round_id"],
        "net": "-10.00",
        "commission": "0.00",
    }
    assert (dan["balance"], dan["held"], dan["dealer_points"]) == ("2009.82", "0.00", 40)
    assert dan["last_round"] == {
        "round_id": round_["round_id"],
        "net": "9.82",
        "commission": "0.18",
    }
    accounts = {a["account"]: a["balance"] for a in api.trial_balance()["accounts"]}
    assert accounts["casino:commission"] == "0.18"
    assert api.trial_balance()["total"] == "0.00"
    report = api.get("/v1/reports/commission?mode=real", headers=OPERATOR).json()
    assert report["total"] == "0.18"
    assert [d["rounds"] for d in report["days"]] == [1]
    points = api.get("/v1/players/dan/dealer-points?mode=real").json()["entries"]
    assert (points[-1]["change"], points[-1]["role"]) == (-10, "dealer")


@pytest.mark.parametrize("table_type", ["I", "II", "III"])
def test_dealer_points_must_reach_the_table_minimum(api: Api, table_type: str) -> None:
    dealer(api, money="5000.00", points=POINTS_MIN[table_type] - 1)
    refused = sit(api, table_type=table_type)
    assert (refused.status_code, refused.json()["code"]) == (409, "not_eligible_to_deal")
    assert refused.json()["requirement"] == "dealer_points"
    assert refused.json()["shortfall"] == 1
    api.post(
        "/v1/players/dan/dealer-points/adjustments",
        {"mode": "real", "change": 1, "reason": "one more"},
        headers=OPERATOR,
    )
    assert sit(api, table_type=table_type).status_code == 201


@pytest.mark.parametrize("table_type", ["I", "II", "III"])
def test_available_money_must_cover_the_worst_case_of_a_round(api: Api, table_type: str) -> None:
    worst = WORST_CASE[table_type]
    one_cent_short = f"{float(worst) - 0.01:.2f}"
    dealer(api, money=one_cent_short)
    refused = sit(api, table_type=table_type)
    assert (refused.status_code, refused.json()["code"]) == (409, "not_eligible_to_deal")
    assert refused.json()["requirement"] == "available_balance"
    assert (refused.json()["required"], refused.json()["shortfall"]) == (worst, "0.01")
    api.deposit("dan", "0.01")
    assert sit(api, table_type=table_type).status_code == 201


@pytest.mark.parametrize("table_type", ["I", "II", "III"])
def test_the_round_total_must_lie_within_the_table_limits(
    api: Api, store: Store, table_type: str
) -> None:
    low, high = LIMITS[table_type]
    table_id = seated_table(api, table_type)
    round_id = confirm(api, table_id).json()["round_id"]
    bet(api, round_id, "player", f"{low - 1}.00")
    short = api.post(f"/v1/rounds/{round_id}/deal")
    assert (short.status_code, short.json()["code"]) == (409, "below_table_minimum")
    bet(api, round_id, "banker", f"{high - low + 1}.00")  # now exactly the maximum
    over = bet(api, round_id, "tie", "1.00")
    assert (over.status_code, over.json()["code"]) == (409, "above_table_maximum")
    assert api.post(f"/v1/rounds/{round_id}/deal").status_code == 200


def test_stakes_are_whole_dollars(api: Api) -> None:
    round_id = confirm(api, seated_table(api)).json()["round_id"]
    answer = bet(api, round_id, "player", "7.50")
    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_stake")


def test_a_dealer_cannot_withdraw_money_held_for_a_round(api: Api, store: Store) -> None:
    confirm(api, seated_table(api))
    dan = api.wallet("dan")
    assert (dan["balance"], dan["held"], dan["available"]) == ("2000.00", "1803.50", "196.50")
    refused = api.post("/v1/players/dan/withdrawals", {"mode": "real", "amount": "196.51"})
    assert (refused.status_code, refused.json()["code"]) == (409, "insufficient_funds")
    assert (
        api.post("/v1/players/dan/withdrawals", {"mode": "real", "amount": "196.50"}).status_code
        == 201
    )


def test_players_are_matched_to_the_longest_waiting_eligible_dealer(api: Api) -> None:
    for name in ("d1", "d2", "d3"):
        dealer(api, name)
    tables = [sit(api, name).json()["table_id"] for name in ("d1", "d2", "d3")]
    api.post("/v1/players/d1/withdrawals", {"mode": "real", "amount": "1500.00"})  # d1 drops out
    for name in ("p1", "p2"):
        api.player(name, real="10.00")
    assert join(api, "p1").json()["table_id"] == tables[1]
    assert join(api, "p2").json()["table_id"] == tables[2]
    api.player("p3", real="10.00")
    refused = join(api, "p3")
    assert (refused.status_code, refused.json()["code"]) == (409, "no_dealer_available")


def test_a_dealer_sits_at_one_table_at_a_time(api: Api) -> None:
    dealer(api)
    assert sit(api).status_code == 201
    again = sit(api, table_type="I")
    assert (again.status_code, again.json()["code"]) == (409, "already_at_table")


def test_a_round_must_be_confirmed_with_a_player_seated(api: Api) -> None:
    dealer(api)
    table_id = sit(api).json()["table_id"]
    refused = confirm(api, table_id)
    assert (refused.status_code, refused.json()["code"]) == (409, "table_not_ready")


def test_an_unknown_table_type_is_refused(api: Api) -> None:
    dealer(api)
    answer = sit(api, table_type="IV")
    assert (answer.status_code, answer.json()["code"]) == (422, "unknown_table_type")


def test_auto_confirm_opens_the_next_round_while_the_dealer_is_eligible(api: Api) -> None:
    table_id = seated_table(api, auto=True)
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    first = table["current_round"]["round_id"]
    bet(api, first, "banker", "10.00")
    dealt = api.post(f"/v1/rounds/{first}/deal").json()
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert table["round_id"] not in (None, first)
    assert table["current_round"]["status"] == "open"
    assert dealt["next_round"] == table["current_round"]  # no need to ask the table
    assert api.wallet("dan")["held"] == "1803.50"


def test_the_auto_confirm_chain_stops_when_the_dealer_is_no_longer_eligible(api: Api) -> None:
    dealer(api, points=59)  # type II needs 50; a $10 round costs the dealer 10 points
    api.player("pat", real="100.00")
    table_id = sit(api, auto=True).json()["table_id"]
    round_id = join(api).json()["round_id"]
    assert round_id is not None  # the first round was confirmed on its own
    bet(api, round_id, "player", "10.00")
    assert api.post(f"/v1/rounds/{round_id}/deal").json()["next_round"] is None
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert table["round_id"] is None
    assert table["auto_confirm"] is False
    assert "needs 50 dealer points" in table["notice"]
    assert api.wallet("dan")["held"] == "0.00"
    refused = confirm(api, table_id)
    assert (refused.status_code, refused.json()["code"]) == (409, "not_eligible_to_deal")


def test_a_player_leaving_voids_the_open_round_and_frees_the_seat(api: Api, store: Store) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    bet(api, round_id, "tie", "20.00")
    left = api.post(f"/v1/p2p/tables/{table_id}/leave", {"player_id": "pat"})
    assert left.status_code == 200
    assert (left.json()["status"], left.json()["player"]) == ("waiting", None)
    assert left.json()["notice"] == "player pat left the table"
    voided = api.get(f"/v1/rounds/{round_id}").json()
    assert (voided["status"], voided["seed"] is not None) == ("voided", True)
    pat, dan = api.wallet("pat"), api.wallet("dan")
    assert (pat["balance"], pat["held"], pat["dealer_points"]) == ("1000.00", "0.00", 0)
    assert (dan["balance"], dan["held"], dan["dealer_points"]) == ("2000.00", "0.00", 100)
    assert join(api).json()["table_id"] == table_id  # waiting again, so matchable


def test_a_dealer_leaving_closes_the_table(api: Api) -> None:
    table_id = seated_table(api)
    left = api.post(f"/v1/p2p/tables/{table_id}/leave", {"player_id": "dan"})
    assert left.json()["status"] == "closed"
    seen_by_player = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert seen_by_player["notice"] == "dealer dan left: the table is closed"
    dealer(api, "dora")
    sit(api, "dora")
    assert join(api).status_code == 201  # pat's seat was freed
    nobody = api.post(f"/v1/p2p/tables/{table_id}/leave", {"player_id": "zed"})
    assert (nobody.status_code, nobody.json()["code"]) == (409, "not_at_table")


def test_every_p2p_event_is_recorded(api: Api, store: Store) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id, PLAYER_WINS).json()["round_id"]
    bet(api, round_id, "player", "10.00")
    api.post(f"/v1/rounds/{round_id}/deal")
    trail = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    kinds = [e["type"] for e in trail if e["aggregate_id"] == round_id]
    assert kinds[-3:] == ["PayoutMade", "CommissionCharged", "Settled"]
    wallet_topics = sorted(e["topic"] for e in trail if e["aggregate_id"] != round_id)
    assert wallet_topics == sorted(
        ["casino:Wallet.FundsHeld"] * 2  # the player's stake and the dealer's worst case
        + ["casino:Wallet.RoundSettled"] * 2
        + ["casino:Wallet.CommissionCharged"]
        + ["casino:Wallet.PointsChanged"] * 2
    )
    topics = [type(e).TOPIC for e in every_store_event(store)]
    assert topics.count("casino:Wallet.CommissionCharged") == 1
    assert topics.count("casino:Wallet.PointsChanged") == 2 + 1  # round, plus dealer set-up


def test_game_history_shows_each_side_card_by_card_with_balances(api: Api) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id, WORKED_EXAMPLE).json()["round_id"]
    bet(api, round_id, "banker", "10.00")
    api.post(f"/v1/rounds/{round_id}/deal")
    pat = api.get("/v1/players/pat/history?limit=10").json()["rounds"]
    dan = api.get("/v1/players/dan/history").json()["rounds"]
    assert [(r["role"], r["net"], r["balance_before"], r["balance_after"]) for r in pat] == [
        ("player", "-10.00", "1000.00", "990.00")
    ]
    assert [(r["role"], r["net"], r["commission"], r["balance_after"]) for r in dan] == [
        ("dealer", "9.82", "0.18", "2009.82")
    ]
    assert pat[0]["round"]["hands"]["player"]["total"] == 3
    assert pat[0]["round"]["bets"] == [{"spot": "banker", "amount": "10.00"}]
    trail = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    opened = next(e for e in trail if e["aggregate_id"] == round_id and e["version"] == 1)
    assert pat[0]["started_at"] == dan[0]["started_at"] == opened["at"]  # The round opened.
    assert pat[0]["started_at"] < pat[0]["settled_at"]
    refused = api.get("/v1/players/pat/history?mode=play")
    assert (refused.status_code, refused.json()["code"]) == (
        403,
        "history_unavailable_for_play_money",
    )


def test_a_player_disconnecting_before_the_deal_voids_the_round(api: Api) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    bet(api, round_id, "banker", "25.00")
    answer = api.post("/v1/players/pat/disconnect")
    assert answer.status_code == 200
    assert answer.json()["affected_rounds"] == [{"round_id": round_id, "effect": "voided"}]
    assert api.get(f"/v1/rounds/{round_id}").json()["status"] == "voided"
    pat, dan = api.wallet("pat"), api.wallet("dan")
    assert (pat["balance"], pat["held"], pat["dealer_points"]) == ("1000.00", "0.00", 0)
    assert (dan["balance"], dan["held"], dan["dealer_points"]) == ("2000.00", "0.00", 100)
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert (table["status"], table["player"]) == ("waiting", None)
    assert table["notice"] == "player pat disconnected and left the table"


def test_a_dealer_disconnecting_after_confirming_lets_the_round_finish(api: Api) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id, PLAYER_WINS).json()["round_id"]
    answer = api.post("/v1/players/dan/disconnect").json()
    assert answer["affected_rounds"][0]["round_id"] == round_id
    assert bet(api, round_id, "player", "10.00").status_code == 201
    settled = api.post(f"/v1/rounds/{round_id}/deal").json()
    assert settled["net"] == {"player": "10.00", "dealer": "-10.18", "casino": "0.18"}
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert table["status"] == "closed"
    dealer(api, "dora")
    sit(api, "dora")
    assert join(api).status_code == 201  # the player was stood up with the table


def test_a_dealer_disconnecting_between_rounds_closes_the_table(api: Api) -> None:
    table_id = seated_table(api)
    assert api.post("/v1/players/dan/disconnect").json()["affected_rounds"] == []
    assert api.get(f"/v1/p2p/tables/{table_id}").json()["status"] == "closed"


def test_reconnecting_lists_the_players_open_rounds(api: Api) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    api.post("/v1/players/dan/disconnect")
    back = api.post("/v1/players/dan/reconnect").json()
    assert [r["round_id"] for r in back["open_rounds"]] == [round_id]
    assert back["open_rounds"][0]["seed"] is None
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert table["notice"] == "dealer dan is back"
    bet(api, round_id, "player", "10.00")
    api.post(f"/v1/rounds/{round_id}/deal")
    assert api.get(f"/v1/p2p/tables/{table_id}").json()["status"] == "seated"  # dan stayed


def test_ids_of_another_kind_are_not_found(api: Api) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    assert api.get(f"/v1/rounds/{table_id}").json()["code"] == "unknown_round"
    assert api.get(f"/v1/rounds/{table_id}/audit").json()["code"] == "unknown_round"
    assert api.post(f"/v1/rounds/{table_id}/deal").json()["code"] == "unknown_round"
    assert api.get(f"/v1/p2p/tables/{round_id}").json()["code"] == "unknown_table"
    assert api.post(f"/v1/p2p/tables/{round_id}/confirm").json()["code"] == "unknown_table"


def test_a_disconnected_dealers_table_closes_when_the_player_leaves(api: Api) -> None:
    table_id = seated_table(api)
    confirm(api, table_id)
    api.post("/v1/players/dan/disconnect")
    api.post(f"/v1/p2p/tables/{table_id}/leave", {"player_id": "pat"})
    assert api.get(f"/v1/p2p/tables/{table_id}").json()["status"] == "closed"
    api.player("cat", real="10.00")
    refused = join(api, "cat")
    assert (refused.status_code, refused.json()["code"]) == (409, "no_dealer_available")


def test_a_dealer_back_before_the_round_ends_keeps_auto_confirm(api: Api) -> None:
    table_id = seated_table(api, auto=True)
    round_id = api.get(f"/v1/p2p/tables/{table_id}").json()["round_id"]
    api.post("/v1/players/dan/disconnect")
    assert api.get(f"/v1/p2p/tables/{table_id}").json()["auto_confirm"] is False
    api.post("/v1/players/dan/reconnect")
    bet(api, round_id, "banker", "10.00")
    api.post(f"/v1/rounds/{round_id}/deal")
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert table["auto_confirm"] is True
    assert table["round_id"] not in (None, round_id)  # the next round was confirmed
