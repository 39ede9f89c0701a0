"""Bonus money through the HTTP API (api.md, Bonus money; rules.md 9), on both stores."""

from __future__ import annotations

from typing import Any

import pytest

from infra.audit.verify import verify
from infra.store.store import Store
from tests.conftest import OPERATOR, SERVICE, Api, every_store_event
from tests.infra.http import test_blackjack as blackjack
from tests.infra.http import test_tables as tables
from tests.infra.http.test_baccarat import BANKER_WINS, PLAYER_WINS, TIE, bet, deal, open_round
from tests.infra.http.test_p2p import bet as p2p_bet
from tests.infra.http.test_p2p import confirm, dealer, join, sit


def grant(api: Api, player: str = "alice", **body: Any) -> Any:
    sent = {"amount": "100.00", "wagering": 10, "expires_in_days": 30} | body
    return api.post(f"/v1/players/{player}/bonuses", sent, headers=OPERATOR)


def books(api: Api, store: Store) -> tuple[Any, ...]:
    """What a refusal must leave alone: the wallet, the bonuses, the trial balance, the log."""
    bonuses = api.get("/v1/players/alice/bonuses").json()
    return api.wallet("alice"), bonuses, api.trial_balance(), len(every_store_event(store))


def accounts(api: Api) -> dict[str, str]:
    trial = api.trial_balance()
    assert trial["total"] == "0.00"
    return {row["account"]: row["balance"] for row in trial["accounts"]}


@pytest.fixture
def alice(api: Api) -> str:
    return api.player("alice", real="20.00")


@pytest.mark.usefixtures("alice")
def test_a_grant_shows_on_the_wallet_and_in_the_books(api: Api) -> None:
    answer = grant(api, max_bet="50.00")
    assert answer.status_code == 201, answer.text
    bonus = answer.json()
    assert bonus["status"] == "active"
    assert (bonus["amount"], bonus["balance"], bonus["wagering_required"]) == (
        "100.00",
        "100.00",
        "1000.00",
    )
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["available"]) == ("20.00", "20.00")  # the cash
    assert wallet["bonus"]["bonus_id"] == bonus["bonus_id"]
    assert wallet["bonus"]["balance"] == "100.00"
    assert accounts(api)["bonus:alice"] == "100.00"
    assert accounts(api)["casino:bonus"] == "-100.00"
    second = grant(api, amount="5.00").json()
    listed = api.get("/v1/players/alice/bonuses").json()
    assert listed["active"]["bonus_id"] == bonus["bonus_id"]
    assert [b["bonus_id"] for b in listed["waiting"]] == [second["bonus_id"]]


@pytest.mark.usefixtures("alice")
@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"wagering": 11}, "wagering_above_cap"),
        ({"amount": "0.00"}, "invalid_amount"),
        ({"amount": "1.001"}, "invalid_amount"),
    ],
)
def test_a_bad_grant_is_refused_422_and_changes_nothing(
    api: Api, store: Store, body: dict[str, Any], code: str
) -> None:
    before = books(api, store)
    answer = grant(api, **body)
    assert (answer.status_code, answer.json()["code"]) == (422, code)
    assert books(api, store) == before


def test_only_an_operator_grants(api: Api, alice: str) -> None:
    answer = api.post(
        "/v1/players/alice/bonuses", {"amount": "1.00", "wagering": 1, "expires_in_days": 1}
    )
    assert answer.status_code == 403


@pytest.mark.usefixtures("alice")
def test_a_forfeit_returns_the_bonus_to_casino_bonus(api: Api, store: Store) -> None:
    bonus_id = grant(api).json()["bonus_id"]
    answer = api.post(f"/v1/players/alice/bonuses/{bonus_id}/forfeit")
    assert answer.status_code == 200 and answer.json()["status"] == "forfeited"
    assert api.wallet("alice")["bonus"] is None
    assert accounts(api)["casino:bonus"] == "0.00"
    before = books(api, store)
    again = api.post(f"/v1/players/alice/bonuses/{bonus_id}/forfeit")
    assert (again.status_code, again.json()["code"]) == (409, "bonus_ended")
    unknown = api.post("/v1/players/alice/bonuses/nope/forfeit")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_bonus")
    assert books(api, store) == before


@pytest.mark.usefixtures("alice")
def test_a_house_stake_takes_cash_first_and_returns_in_proportion(api: Api) -> None:
    grant(api)
    round_id = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, round_id, "player", "50.00").status_code == 201  # 20 cash, 30 bonus
    wallet = api.wallet("alice")
    assert (wallet["available"], wallet["bonus"]["held"]) == ("0.00", "30.00")
    api.player("bob", real="10.00")
    no_bonus = open_round(api, TIE, player="bob")["round_id"]
    assert bet(api, no_bonus, "player", "10.00").status_code == 201
    assert "net_split" not in deal(api, no_bonus).json()  # no bonus: answered as before
    settled = deal(api, round_id).json()  # won 50: 100 back, 40 cash and 60 bonus
    assert settled["net"]["player"] == "50.00"
    assert settled["net_split"] == {"alice": {"net_cash": "20.00", "net_bonus": "30.00"}}
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["bonus"]["balance"]) == ("40.00", "130.00")
    assert wallet["bonus"]["wagered"] == "50.00"
    assert accounts(api)["bonus:alice"] == "130.00"


@pytest.mark.usefixtures("alice")
def test_a_hedge_with_most_of_the_bonus_is_refused_and_a_small_one_counts_net(
    api: Api, store: Store
) -> None:
    grant(api, amount="100.00")
    round_id = open_round(api, BANKER_WINS)["round_id"]
    assert bet(api, round_id, "player", "70.00").status_code == 201  # 20 cash, 50 bonus
    before = books(api, store)
    refused = bet(api, round_id, "banker", "10.00")
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "bonus_surebet"
    assert (refused.json()["limit"], refused.json()["bonus_staked"]) == ("50.00", "60.00")
    assert books(api, store) == before
    # A smaller hedge: the bonus staked stays within half the bonus balance.
    small = open_round(api, BANKER_WINS)["round_id"]
    assert bet(api, small, "player", "5.00").status_code == 201
    assert bet(api, small, "banker", "4.00").status_code == 201
    deal(api, small)
    assert api.wallet("alice")["bonus"]["wagered"] == "1.00"  # |5 - 4|


@pytest.mark.usefixtures("alice")
def test_a_tie_counts_nothing_and_a_bet_above_the_maximum_stake_is_refused(
    api: Api, store: Store
) -> None:
    grant(api, max_bet="25.00")
    round_id = open_round(api, TIE)["round_id"]
    before = books(api, store)
    refused = bet(api, round_id, "player", "26.00")
    assert (refused.status_code, refused.json()["code"]) == (409, "bonus_max_bet")
    assert refused.json()["max_bet"] == "25.00"
    assert books(api, store) == before
    assert bet(api, round_id, "player", "25.00").status_code == 201
    deal(api, round_id)
    assert api.wallet("alice")["bonus"]["wagered"] == "0.00"


@pytest.mark.usefixtures("alice")
def test_the_maximum_stake_bounds_a_spot_added_to_in_small_steps(api: Api, store: Store) -> None:
    grant(api, max_bet="5.00")
    round_id = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, round_id, "player", "5.00").status_code == 201
    before = books(api, store)
    refused = bet(api, round_id, "player", "5.00")  # 10.00 on Player: past the maximum
    assert (refused.status_code, refused.json()["code"]) == (409, "bonus_max_bet")
    assert books(api, store) == before
    assert bet(api, round_id, "banker", "1.00").status_code == 201  # another spot: its own
    deal(api, round_id)
    assert verify(store, None, lambda _: None).problems == []


@pytest.mark.usefixtures("alice")
def test_the_maximum_stake_bounds_a_blackjack_hand_doubled(api: Api) -> None:
    grant(api, max_bet="30.00")
    round_id = blackjack.open_round(api, ["6", "10", "5", "7", "K"], hall="2")["round_id"]
    assert blackjack.bet(api, round_id, 1, "20.00").status_code == 201
    blackjack.deal(api, round_id)  # 11 against a 10 showing
    refused = blackjack.act(api, round_id, 1, "double")  # 40.00 on the hand
    assert (refused.status_code, refused.json()["code"]) == (409, "bonus_max_bet")


def test_a_bet_taken_back_after_a_forfeit_returns_its_bonus_money_to_the_casino(
    api: Api, store: Store
) -> None:
    api.player("alice")  # no cash
    bonus_id = grant(api, amount="10.00").json()["bonus_id"]
    round_id = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, round_id, "player", "10.00").status_code == 201  # all bonus
    api.post(f"/v1/players/alice/bonuses/{bonus_id}/forfeit")
    key = {**SERVICE, "Idempotency-Key": "rm-1"}
    answer = api.client.delete(f"/v1/rounds/{round_id}/bets/player", headers=key)
    assert answer.status_code == 200, answer.text
    [past] = api.get("/v1/players/alice/bonuses").json()["past"]
    assert (past["status"], past["balance"]) == ("forfeited", "0.00")
    assert (accounts(api)["bonus:alice"], accounts(api)["casino:bonus"]) == ("0.00", "0.00")
    [day] = api.get("/v1/reports/bonus", headers=OPERATOR).json()["days"]
    assert (day["forfeited"], day["outstanding"]) == ("10.00", "0.00")
    assert verify(store, None, lambda _: None).problems == []


def test_stakes_placed_before_the_bonus_count_nothing_towards_it(api: Api) -> None:
    api.player("alice", real="100.00")
    round_id = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, round_id, "player", "100.00").status_code == 201  # no bonus yet
    grant(api, amount="10.00")
    assert bet(api, round_id, "player", "5.00").status_code == 201  # under the bonus
    deal(api, round_id)
    assert api.wallet("alice")["bonus"]["wagered"] == "5.00"  # not 105.00


def test_bets_all_taken_back_keep_the_rounds_surebet_limit_and_the_audit_agrees(
    api: Api, store: Store
) -> None:
    api.player("alice")  # no cash: every stake is bonus money
    grant(api, amount="100.00")
    hedged = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, hedged, "player", "40.00").status_code == 201  # the balance before: 100
    key = {**SERVICE, "Idempotency-Key": "rm-all"}
    assert api.client.delete(f"/v1/rounds/{hedged}/bets/player", headers=key).status_code == 200
    won = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, won, "player", "50.00").status_code == 201
    deal(api, won)
    assert api.wallet("alice")["bonus"]["balance"] == "150.00"
    assert bet(api, hedged, "player", "40.00").status_code == 201
    refused = bet(api, hedged, "banker", "20.00")  # 60.00 on a surebet: half of 100, not 150
    assert (refused.status_code, refused.json()["code"]) == (409, "bonus_surebet")
    assert refused.json()["limit"] == "50.00"
    assert bet(api, hedged, "banker", "10.00").status_code == 201
    deal(api, hedged)
    assert verify(store, None, lambda _: None).problems == []


def test_an_exclusion_forfeits_every_bonus(api: Api, alice: str) -> None:
    grant(api)
    grant(api, amount="5.00")
    answer = api.post("/v1/players/alice/exclusions", {"kind": "time_out", "days": 1})
    assert answer.status_code in (200, 201), answer.text
    listed = api.get("/v1/players/alice/bonuses").json()
    assert listed["active"] is None and listed["waiting"] == []
    assert [b["status"] for b in listed["past"]] == ["forfeited", "forfeited"]
    assert accounts(api)["casino:bonus"] == "0.00"
    refused = grant(api)  # nor is a bonus granted while it runs
    assert (refused.status_code, refused.json()["code"]) == (409, "player_excluded")
    assert api.get("/v1/players/alice/bonuses").json()["active"] is None


def test_the_bonus_report_counts_each_day(api: Api, alice: str) -> None:
    first = grant(api, amount="100.00").json()
    grant(api, amount="5.00")
    api.post(f"/v1/players/alice/bonuses/{first['bonus_id']}/forfeit")
    answer = api.get("/v1/reports/bonus", headers=OPERATOR)
    assert answer.status_code == 200, answer.text
    [day] = answer.json()["days"]
    assert (day["granted"], day["forfeited"], day["expired"], day["outstanding"]) == (
        "105.00",
        "100.00",
        "0.00",
        "5.00",
    )


def test_a_p2p_round_takes_cash_only(api: Api, store: Store) -> None:
    dealer(api)
    api.player("pat", real="10.00")
    grant(api, player="pat")
    table_id = sit(api).json()["table_id"]
    assert join(api).status_code == 201
    round_id = confirm(api, table_id).json()["round_id"]
    before = api.wallet("pat"), api.trial_balance(), len(every_store_event(store))
    refused = p2p_bet(api, round_id, "player", "20.00")  # cash and bonus would cover it
    assert (refused.status_code, refused.json()["code"]) == (409, "bonus_not_allowed")
    assert refused.json()["available"] == "10.00"
    short = p2p_bet(api, round_id, "player", "200.00")  # they would not
    assert (short.status_code, short.json()["code"]) == (409, "insufficient_funds")
    assert (api.wallet("pat"), api.trial_balance(), len(every_store_event(store))) == before
    assert p2p_bet(api, round_id, "player", "10.00").status_code == 201


def test_a_loss_limit_counts_cash_only(api: Api, alice: str) -> None:
    grant(api)
    answer = api.client.put(
        "/v1/players/alice/limits",
        json={"mode": "real", "loss": {"day": "25.00"}},
        headers={**SERVICE, "Idempotency-Key": "limits"},
    )
    assert answer.status_code == 200, answer.text
    round_id = open_round(api, BANKER_WINS)["round_id"]
    # $60 staked: $20 cash, which the limit counts, and $40 of bonus, which it does not.
    assert bet(api, round_id, "player", "60.00").status_code == 201
    deal(api, round_id)
    windows = api.get("/v1/players/alice/limits?mode=real").json()["windows"]
    assert [(w["kind"], w["used"]) for w in windows] == [("loss", "20.00")]


def test_an_american_table_takes_bonus_money_and_refuses_a_big_hedge(api: Api) -> None:
    api.player("alice", real="10.00")
    grant(api, amount="100.00")
    table_id = tables.open_table(api)
    assert tables.sit(api, table_id, "alice", "1").status_code == 201
    coup = tables.open_coup(api, table_id, PLAYER_WINS)
    assert tables.bet(api, coup, "alice", "player", "40.00").status_code == 201  # 10 + 30
    hedge = tables.bet(api, coup, "alice", "banker", "25.00")  # 55 of bonus on a surebet
    assert (hedge.status_code, hedge.json()["code"]) == (409, "bonus_surebet")
    assert tables.bet(api, coup, "alice", "banker", "20.00").status_code == 201  # 50: allowed
    settled = api.post(f"/v1/rounds/{coup}/deal").json()
    # Player wins 40, Banker loses 20: $80 back on $60 staked ($10 cash, $50 bonus): the
    # bonus's 80 x 50/60 = 66.66 (rounded down), cash the rest, 13.34.
    assert settled["net_split"] == {"alice": {"net_cash": "3.34", "net_bonus": "16.66"}}
    assert api.wallet("alice")["bonus"]["wagered"] == "20.00"  # |40 - 20|


@pytest.mark.usefixtures("alice")
def test_a_blackjack_push_counts_nothing_and_a_loss_its_stake(api: Api) -> None:
    grant(api)
    pushed = blackjack.open_round(api, ["10", "10", "K", "Q"], hall="2")["round_id"]
    assert blackjack.bet(api, pushed, 1, "30.00").status_code == 201  # 20 cash, 10 bonus
    blackjack.deal(api, pushed)
    settled = blackjack.act(api, pushed, 1, "stand").json()
    assert settled["net_split"] == {"alice": {"net_cash": "0.00", "net_bonus": "0.00"}}
    assert api.wallet("alice")["bonus"]["wagered"] == "0.00"
    lost = blackjack.open_round(api, ["10", "10", "7", "Q"], hall="2")["round_id"]
    assert blackjack.bet(api, lost, 1, "30.00").status_code == 201
    blackjack.deal(api, lost)
    blackjack.act(api, lost, 1, "stand")  # 17 against 20
    wallet = api.wallet("alice")
    assert (wallet["balance"], wallet["bonus"]["balance"], wallet["bonus"]["wagered"]) == (
        "0.00",
        "90.00",
        "30.00",
    )
