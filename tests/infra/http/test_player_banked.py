"""Chemin de fer and baccarat en banque through the HTTP API, with certification shoes,
on both stores (rules.md 2.3, 2.4, 4): the bank, banco, choices, the bank moving on.

Chemin de fer shoes list punto, banker, punto, banker, then third cards as drawn; en
banque shoes right, left, banker, right, left, banker, then right, left, banker."""

from __future__ import annotations

from typing import Any

from infra.audit.verify import verify
from infra.store.store import Store
from infra.workers import DueChoiceWorker
from tests.conftest import OPERATOR, SERVICE, Api, every_store_event
from tests.infra.http.helpers import later

BANKER_WINS = ["K", "9", "Q", "K"]  # punto 0, banker 9: a natural
PUNTO_WINS = ["9", "K", "K", "Q"]  # punto 9, banker 0
PUNTO_FIVE = ["2", "10", "3", "7"]  # punto 5 (a choice), banker 7


def table(api: Api, game: str, *seated: str, **limits: str) -> str:
    answer = api.post("/v1/tables", {"game": game, "mode": "real", **limits})
    assert answer.status_code == 201, answer.text
    table_id: str = answer.json()["table_id"]
    seats = iter(["R1", "L1", "R2", "L2"] if game == "en_banque" else ["1", "2", "3", "4"])
    for player_id in seated:
        api.player(player_id, real="1000.00")
        sit = api.post(
            f"/v1/tables/{table_id}/seats", {"player_id": player_id, "seat": next(seats)}
        )
        assert sit.status_code == 201, sit.text
    return table_id


def bank(api: Api, table_id: str, player_id: str, amount: str) -> Any:
    return api.post(f"/v1/tables/{table_id}/bank", {"player_id": player_id, "amount": amount})


def coup(api: Api, table_id: str, shoe: list[str]) -> str:
    answer = api.post(f"/v1/tables/{table_id}/coups", {"shoe": shoe})
    assert answer.status_code == 201, answer.text
    round_id: str = answer.json()["round_id"]
    return round_id


def bet(api: Api, round_id: str, player_id: str, spot: str, amount: str) -> Any:
    body = {"player_id": player_id, "spot": spot, "amount": amount}
    return api.post(f"/v1/rounds/{round_id}/bets", body)


def deal(api: Api, round_id: str) -> dict[str, Any]:
    answer = api.post(f"/v1/rounds/{round_id}/deal")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def seen(api: Api, table_id: str) -> dict[str, Any]:
    result: dict[str, Any] = api.get(f"/v1/tables/{table_id}").json()
    return result


def money(api: Api, *players: str) -> dict[str, tuple[str, str]]:
    return {p: (api.wallet(p)["balance"], api.wallet(p)["held"]) for p in players}


def test_the_bank_grows_over_winning_coups_less_the_commission_to_the_cent(
    api: Api, store: Store
) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob", "cat")
    assert seen(api, table_id)["bank_offered_to"] == "ann"  # the first to sit down
    assert bank(api, table_id, "ann", "100.00").status_code == 201
    first = coup(api, table_id, BANKER_WINS)
    assert bet(api, first, "bob", "punto", "30.00").status_code == 201
    assert bet(api, first, "cat", "punto", "20.00").status_code == 201
    settled = deal(api, first)
    assert (settled["outcome"], settled["commission"]) == ("banker", "2.50")  # 5% of $50
    assert (settled["bank_before"], settled["bank_after"]) == ("100.00", "147.50")
    assert settled["net"] == {"ann": "47.50", "bob": "-30.00", "cat": "-20.00"}
    second = coup(api, table_id, BANKER_WINS)
    bet(api, second, "bob", "punto", "47.00")
    assert deal(api, second)["bank_after"] == "192.15"  # 147.50 + 47.00 - 2.35
    assert seen(api, table_id)["banker"] == {"player_id": "ann", "seat": "1", "bank": "192.15"}
    assert money(api, "ann", "bob", "cat") == {
        "ann": ("1092.15", "192.15"),
        "bob": ("923.00", "0.00"),
        "cat": ("980.00", "0.00"),
    }
    balance = {a["account"]: a["balance"] for a in api.trial_balance()["accounts"]}
    assert balance["casino:commission"] == "4.85" and api.trial_balance()["total"] == "0.00"
    assert verify(store, None, lambda _: None).problems == []


def test_a_lost_coup_passes_the_bank_to_the_next_seat_and_a_decline_passes_it_on(
    api: Api, store: Store
) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob", "cat")
    bank(api, table_id, "ann", "100.00")
    lost = coup(api, table_id, PUNTO_WINS)
    bet(api, lost, "cat", "punto", "40.00")
    settled = deal(api, lost)
    assert (settled["net"], settled["bank_after"]) == ({"ann": "-40.00", "cat": "40.00"}, "60.00")
    after = seen(api, table_id)
    assert (after["banker"], after["bank_offered_to"]) == (None, "bob")
    assert money(api, "ann")["ann"] == ("960.00", "0.00")  # what was left came back
    refused = bank(api, table_id, "cat", "50.00")
    assert (refused.status_code, refused.json()["code"]) == (409, "not_offered_the_bank")
    declined = api.post(f"/v1/tables/{table_id}/bank/decline", {"player_id": "bob"})
    assert declined.json()["bank_offered_to"] == "cat"
    api.post(f"/v1/tables/{table_id}/bank/decline", {"player_id": "cat"})
    assert seen(api, table_id)["bank_offered_to"] is None  # nobody: the table waits
    no_bank = api.post(f"/v1/tables/{table_id}/coups")
    assert (no_bank.status_code, no_bank.json()["code"]) == (409, "no_bank")
    assert bank(api, table_id, "bob", "50.00").status_code == 201  # waiting: anyone seated
    assert verify(store, None, lambda _: None).problems == []


def test_bad_bank_and_bet_requests_are_refused_and_change_nothing(api: Api, store: Store) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob")
    before = (money(api, "ann", "bob"), len(every_store_event(store)))
    refusals = (("10.00", "bank_out_of_limits"), ("10001.00", "bank_out_of_limits"),
                ("2000.00", "insufficient_funds"), ("20.50", "invalid_stake"))  # fmt: skip
    for amount, code in refusals:
        assert bank(api, table_id, "ann", amount).json()["code"] == code
    assert bank(api, table_id, "bob", "50.00").json()["code"] == "not_offered_the_bank"
    assert (money(api, "ann", "bob"), len(every_store_event(store))) == before
    bank(api, table_id, "ann", "50.00")
    round_id = coup(api, table_id, BANKER_WINS)
    own = bet(api, round_id, "ann", "punto", "5.00")
    assert (own.status_code, own.json()["code"]) == (409, "banker_cannot_bet")
    bet(api, round_id, "bob", "punto", "30.00")
    covered = bet(api, round_id, "bob", "punto", "25.00")
    assert (covered.json()["code"], covered.json()["uncovered"]) == ("bank_covered", "20.00")
    mid_coup = api.post(f"/v1/tables/{table_id}/bank/withdraw", {"player_id": "ann"})
    assert (mid_coup.status_code, mid_coup.json()["code"]) == (409, "coup_in_progress")


def test_banco_covers_the_whole_bank_alone_and_banco_suivi_goes_first(api: Api) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob", "cat", "dan")
    bank(api, table_id, "ann", "100.00")
    first = coup(api, table_id, BANKER_WINS)
    bet(api, first, "cat", "punto", "10.00")
    called = api.post(f"/v1/rounds/{first}/banco", {"player_id": "bob"})
    assert called.status_code == 201, called.text
    assert called.json()["bets"] == [{"player_id": "bob", "spot": "punto", "amount": "100.00"}]
    assert money(api, "bob", "cat") == {"bob": ("1000.00", "100.00"), "cat": ("1000.00", "0.00")}
    again = api.post(f"/v1/rounds/{first}/banco", {"player_id": "cat"})
    assert (again.json()["code"], again.json()["reason"]) == ("banco_refused", "already_called")
    assert deal(api, first)["net"]["bob"] == "-100.00"  # bob's banco lost: suivi next coup
    second = coup(api, table_id, BANKER_WINS)
    api.post(f"/v1/rounds/{second}/banco", {"player_id": "dan"})
    followed = api.post(f"/v1/rounds/{second}/banco", {"player_id": "bob"})
    assert followed.status_code == 201, followed.text
    assert followed.json()["banco"] == {"player_id": "bob", "spot": "punto", "suivi": True}
    assert money(api, "dan")["dan"] == ("1000.00", "0.00")  # dan's call returned


def test_the_playing_punter_chooses_on_5_and_the_system_chooses_when_time_runs_out(
    api: Api, store: Store
) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob", "cat")
    bank(api, table_id, "ann", "100.00")
    round_id = coup(api, table_id, [*PUNTO_FIVE, "4"])
    bet(api, round_id, "bob", "punto", "20.00")
    bet(api, round_id, "cat", "punto", "30.00")  # the highest stake plays the punto
    in_play = deal(api, round_id)
    assert (in_play["status"], in_play["playing"]["punto"]) == ("in_play", "cat")
    assert in_play["next"]["player_id"] == "cat" and in_play["next"]["actions"] == ["draw", "stand"]
    wrong = api.post(f"/v1/rounds/{round_id}/actions", {"player_id": "bob", "action": "draw"})
    assert (wrong.status_code, wrong.json()["code"]) == (409, "not_your_decision")
    assert DueChoiceWorker(store, 30).make_due_choices(later(29)) == []
    assert DueChoiceWorker(store, 30).make_due_choices(later(31)) == [round_id]
    settled = api.get(f"/v1/rounds/{round_id}").json()
    assert settled["decisions"] == [
        {"hand": "punto", "action": "draw", "player_id": "cat", "by": "system"}
    ]
    assert settled["hands"]["punto"]["total"] == 9 and settled["outcome"] == "punto"


def test_a_disconnected_bankers_bank_stays_at_stake_then_is_released_and_passed_on(
    api: Api, store: Store
) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob", "cat")
    bank(api, table_id, "ann", "100.00")
    round_id = coup(api, table_id, BANKER_WINS)
    bet(api, round_id, "bob", "punto", "20.00")
    api.post("/v1/players/ann/disconnect")
    assert seen(api, table_id)["banker"]["bank"] == "100.00"
    settled = deal(api, round_id)
    assert settled["bank_after"] == "119.00"  # won $20 less $1 commission, then released
    after = seen(api, table_id)
    assert (after["banker"], after["bank_offered_to"]) == (None, "bob")
    assert [seat["player_id"] for seat in after["seats"]] == ["bob", "cat"]
    assert money(api, "ann")["ann"] == ("1019.00", "0.00")
    assert verify(store, None, lambda _: None).problems == []


def test_en_banque_a_tie_on_one_side_halves_an_a_cheval_bet(api: Api, store: Store) -> None:
    table_id = table(api, "en_banque", "ann", "bob", "cat")  # ann R1, bob L1, cat R2
    assert bank(api, table_id, "ann", "500.00").status_code == 201
    round_id = coup(api, table_id, ["10", "K", "6", "7", "6", "K"])  # right 7, left 6, banker 6
    odd = bet(api, round_id, "cat", "both", "15.00")
    assert (odd.status_code, odd.json()["code"]) == (422, "invalid_stake")
    bet(api, round_id, "bob", "left", "40.00")
    bet(api, round_id, "cat", "right", "20.00")
    bet(api, round_id, "cat", "both", "30.00")
    owed = deal(api, round_id)  # the banker's 6 chooses, the system against the left
    assert owed["next"]["player_id"] == "ann" and owed["next"]["hand"] == "banker"
    settled = api.post(
        f"/v1/rounds/{round_id}/actions", {"player_id": "ann", "action": "stand"}
    ).json()
    assert settled["outcome"] == "right wins, left ties"
    payouts = {(p["player_id"], p["spot"]): p["net"] for p in settled["payouts"]}
    assert payouts == {("bob", "left"): "0.00", ("cat", "right"): "20.00", ("cat", "both"): "15.00"}
    assert (settled["commission"], settled["bank_after"]) == ("0.00", "465.00")
    assert verify(store, None, lambda _: None).problems == []


def test_en_banque_one_side_wins_the_other_loses_and_a_cheval_is_returned(api: Api) -> None:
    table_id = table(api, "en_banque", "ann", "bob", "cat")
    bank(api, table_id, "ann", "500.00")
    split = coup(api, table_id, ["10", "K", "7", "8", "6", "K"])  # right 8, left 6, banker 7
    bet(api, split, "cat", "both", "40.00")
    bet(api, split, "bob", "left", "10.00")
    settled = deal(api, split)
    assert settled["outcome"] == "right wins, left loses"
    payouts = {(p["player_id"], p["spot"]): p["net"] for p in settled["payouts"]}
    assert payouts == {("bob", "left"): "-10.00", ("cat", "both"): "0.00"}
    assert (settled["commission"], settled["bank_after"]) == ("0.50", "509.50")
    both_lose = coup(api, table_id, ["10", "K", "9", "8", "2", "K"])  # the banker's natural 9
    bet(api, both_lose, "cat", "both", "40.00")
    assert deal(api, both_lose)["payouts"][0]["net"] == "-40.00"


def test_three_lost_bancos_bar_a_player_and_a_winning_banco_takes_the_bank(
    api: Api, store: Store
) -> None:
    table_id = table(api, "en_banque", "ann", "bob")  # ann R1, bob L1
    bank(api, table_id, "ann", "100.00")
    for bank_after in ("195.00", "380.25", "741.49"):  # each banco lost to a natural 9
        lost = coup(api, table_id, ["10", "K", "9", "7", "2", "K"])
        assert api.post(f"/v1/rounds/{lost}/banco", {"player_id": "bob"}).status_code == 201
        assert deal(api, lost)["bank_after"] == bank_after
    api.player("cat", real="10000.00")
    api.post(f"/v1/tables/{table_id}/seats", {"player_id": "cat", "seat": "L2"})
    beaten = coup(api, table_id, ["10", "9", "7", "K", "10", "K"])  # left 9 against 7
    barred = api.post(f"/v1/rounds/{beaten}/banco", {"player_id": "bob"})
    assert (barred.json()["code"], barred.json()["reason"]) == (
        "banco_refused",
        "three_bancos_lost",
    )
    assert api.post(f"/v1/rounds/{beaten}/banco", {"player_id": "cat"}).status_code == 201
    settled = deal(api, beaten)
    assert (settled["net"]["cat"], settled["bank_after"]) == ("741.49", "0.00")
    after = seen(api, table_id)
    assert (after["banker"], after["bank_offered_to"]) == (None, "cat")
    assert bank(api, table_id, "ann", "100.00").json()["code"] == "not_offered_the_bank"
    assert bank(api, table_id, "cat", "1000.00").status_code == 201
    # ann won 641.49 over three bancos, then the whole bank of 741.49 to cat's.
    assert money(api, "ann")["ann"] == ("900.00", "0.00")
    assert verify(store, None, lambda _: None).problems == []


def test_a_banco_binds_and_a_house_table_has_no_bank(api: Api, store: Store) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob")
    bank(api, table_id, "ann", "100.00")
    round_id = coup(api, table_id, BANKER_WINS)
    api.post(f"/v1/rounds/{round_id}/banco", {"player_id": "bob"})
    before = (money(api, "bob"), len(every_store_event(store)))
    for taken_back in (f"/v1/rounds/{round_id}/bets?player_id=bob",
                       f"/v1/rounds/{round_id}/bets/punto?player_id=bob"):  # fmt: skip
        headers = {**SERVICE, "Idempotency-Key": taken_back}
        answer = api.client.delete(taken_back, headers=headers)
        assert (answer.status_code, answer.json()["code"]) == (409, "banco_called")
    assert (money(api, "bob"), len(every_store_event(store))) == before
    house = table(api, "punto_banco", "cat")
    refused = bank(api, house, "cat", "100.00")
    assert (refused.status_code, refused.json()["code"]) == (409, "house_banked")


def test_the_banker_and_a_bancos_caller_are_listed_among_a_coups_players(api: Api) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob", "cat")
    bank(api, table_id, "ann", "100.00")
    round_id = coup(api, table_id, PUNTO_WINS)
    api.post(f"/v1/rounds/{round_id}/banco", {"player_id": "cat"})
    opened = api.post("/v1/players/ann/reconnect").json()["open_rounds"]
    assert [r["round_id"] for r in opened] == [round_id]  # the banker's coup is open
    deal(api, round_id)
    listed = api.get(f"/v1/rounds?round_id={round_id}", headers=OPERATOR).json()["rounds"]
    assert listed[0]["players"] == [
        {"player_id": "ann", "role": "banker"},
        {"player_id": "cat", "role": "player"},
    ]
    for player_id in ("ann", "cat"):
        mine = api.get(f"/v1/rounds?player_id={player_id}", headers=OPERATOR).json()["rounds"]
        assert round_id in [r["round_id"] for r in mine]


def test_a_retry_spelling_the_same_query_another_way_is_the_same_request(
    api: Api, store: Store
) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob")
    bank(api, table_id, "ann", "100.00")
    round_id = coup(api, table_id, BANKER_WINS)
    bet(api, round_id, "bob", "punto", "10.00")
    headers = {**SERVICE, "Idempotency-Key": "take-back-1"}
    first = api.client.delete(f"/v1/rounds/{round_id}/bets?player_id=bob", headers=headers)
    assert first.status_code == 200, first.text
    events = len(every_store_event(store))
    for spelling in ("player_id=%62ob", "player_id=bob&"):
        retry = api.client.delete(f"/v1/rounds/{round_id}/bets?{spelling}", headers=headers)
        assert retry.status_code == 200, retry.text
        assert retry.headers["Idempotent-Replayed"] == "true"
    assert len(every_store_event(store)) == events


def test_leaving_while_owing_a_choice_answers_the_coup_as_the_system_left_it(
    api: Api,
) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob")
    bank(api, table_id, "ann", "100.00")
    round_id = coup(api, table_id, ["2", "10", "3", "5", "4"])  # punto 5, banker 5; a 4
    bet(api, round_id, "bob", "punto", "20.00")
    in_play = deal(api, round_id)
    assert in_play["next"]["player_id"] == "bob"
    left = api.post(f"/v1/tables/{table_id}/leave", {"player_id": "bob"})
    assert left.status_code == 200, left.text
    answered = left.json()["current_round"]
    assert answered == api.get(f"/v1/rounds/{round_id}").json()


def test_chemin_de_fer_covers_bets_in_play_order_at_the_deal_and_returns_the_rest(
    api: Api, store: Store
) -> None:
    table_id = table(api, "chemin_de_fer", "ann", "bob", "cat", "dan")  # seats 1-4
    bank(api, table_id, "ann", "100.00")
    round_id = coup(api, table_id, BANKER_WINS)
    alone = bet(api, round_id, "dan", "punto", "101.00")
    assert (alone.status_code, alone.json()["code"]) == (409, "bank_covered")
    assert alone.json()["bank"] == "100.00"
    for player_id, amount in (("dan", "80.00"), ("cat", "50.00"), ("bob", "30.00")):
        assert bet(api, round_id, player_id, "punto", amount).status_code == 201  # any order
    assert money(api, "dan")["dan"] == ("1000.00", "80.00")
    settled = deal(api, round_id)
    assert settled["returned"] == [
        {"player_id": "dan", "spot": "punto", "amount": "60.00", "covered": "20.00"}
    ]
    assert settled["bets"] == [
        {"player_id": "bob", "spot": "punto", "amount": "30.00"},
        {"player_id": "cat", "spot": "punto", "amount": "50.00"},
        {"player_id": "dan", "spot": "punto", "amount": "20.00"},
    ]
    assert settled["playing"]["punto"] == "cat"  # the highest bet that stands
    assert settled["net"] == {"ann": "95.00", "bob": "-30.00", "cat": "-50.00", "dan": "-20.00"}
    assert money(api, "dan")["dan"] == ("980.00", "0.00")
    assert api.get(f"/v1/rounds/{round_id}").json()["returned"] == settled["returned"]
    assert verify(store, None, lambda _: None).problems == []


def test_en_banque_seats_the_banker_at_b_and_takes_bets_on_ones_own_side(
    api: Api, store: Store
) -> None:
    table_id = table(api, "en_banque", "ann", "bob", "cat")  # ann R1, bob L1, cat R2
    put_up = bank(api, table_id, "ann", "200.00")
    assert put_up.json()["banker"] == {"player_id": "ann", "seat": "B", "bank": "200.00"}
    assert [s["seat"] for s in put_up.json()["seats"]] == ["B", "L1", "R2"]
    at_b = api.post(f"/v1/tables/{table_id}/seats", {"player_id": "dan", "seat": "B"})
    assert (at_b.status_code, at_b.json()["code"]) == (422, "unknown_seat")
    round_id = coup(api, table_id, ["10", "K", "9", "8", "2", "K"])  # the banker's natural
    wrong = bet(api, round_id, "cat", "left", "10.00")
    assert (wrong.status_code, wrong.json()["code"]) == (409, "wrong_side")
    assert (wrong.json()["seat"], wrong.json()["side"]) == ("R2", "right")
    whole = bet(api, round_id, "bob", "left", "200.00")
    assert (whole.status_code, whole.json()["code"]) == (409, "bank_covered")
    assert bet(api, round_id, "bob", "both", "150.00").status_code == 201
    assert bet(api, round_id, "cat", "right", "50.00").status_code == 201
    full = bet(api, round_id, "cat", "both", "2.00")
    assert (full.json()["code"], full.json()["uncovered"]) == ("bank_covered", "0.00")
    assert deal(api, round_id)["bank_after"] == "390.00"  # both lost: $200 less 5%
    withdrawn = api.post(f"/v1/tables/{table_id}/bank/withdraw", {"player_id": "ann"})
    assert withdrawn.json()["banker"] is None
    assert [(s["seat"], s["player_id"]) for s in withdrawn.json()["seats"]] == [
        ("L1", "bob"),
        ("R1", "ann"),
        ("R2", "cat"),
    ]
    assert verify(store, None, lambda _: None).problems == []
