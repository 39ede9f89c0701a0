"""A body is judged before the state is (api.md, Conventions): a request whose body no
state could accept is a 422 naming the body's fault, whatever the player, round or
table it names, and changes nothing. A state's refusal (409, 404) is for a body that
some state would have taken."""

from __future__ import annotations

from typing import Any

from infra.store.store import Store
from tests.conftest import OPERATOR, Api, every_store_event
from tests.infra.http import test_baccarat as house
from tests.infra.http import test_player_banked as banked


def refusal(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json()["code"]


def test_a_bad_self_exclusion_is_422_even_for_a_player_excluded_already(
    api: Api, store: Store
) -> None:
    api.player("alice")
    assert api.post("/v1/players/alice/exclusions", {"kind": "time_out", "days": 3}).is_success
    before = len(every_store_event(store))
    for body in ({"kind": "self_exclusion", "months": 3}, {"kind": "time_out", "days": 43}):
        answer = api.post("/v1/players/alice/exclusions", body)
        assert refusal(answer) == (422, "unknown_period"), body
    well_formed = {"kind": "self_exclusion", "months": 6}
    assert refusal(api.post("/v1/players/alice/exclusions", well_formed)) == (
        409,
        "player_excluded",
    )
    assert len(every_store_event(store)) == before


def test_a_bad_body_names_its_fault_before_the_player_is_found(api: Api) -> None:
    exclusion = api.post("/v1/players/nobody/exclusions", {"kind": "self_exclusion", "months": 7})
    assert refusal(exclusion) == (422, "unknown_period")
    for change in (0, 10**10):
        body = {"mode": "real", "change": change, "reason": "goodwill"}
        adjusted = api.post("/v1/players/nobody/dealer-points/adjustments", body, OPERATOR)
        assert refusal(adjusted) == (422, "invalid_points_change"), change
    body = {"mode": "real", "change": 5, "reason": "goodwill"}
    adjusted = api.post("/v1/players/nobody/dealer-points/adjustments", body, OPERATOR)
    assert refusal(adjusted) == (404, "unknown_player")


def test_a_box_no_round_has_is_422_even_on_a_round_that_is_over(api: Api) -> None:
    api.player("alice", real="100.00")
    round_id = house.open_round(api, house.BANKER_WINS)["round_id"]
    assert house.bet(api, round_id, "banker", "10.00").status_code == 201
    assert house.deal(api, round_id).status_code == 200
    for round_ in (round_id, "no-such-round"):
        answer = api.post(f"/v1/rounds/{round_}/bets", {"box": 9, "amount": "10.00"})
        assert refusal(answer) == (422, "invalid_box"), round_
    over = api.post(f"/v1/rounds/{round_id}/bets", {"box": 1, "amount": "10.00"})
    assert over.status_code == 409


def test_a_bank_of_dollars_and_cents_is_422_at_any_table(api: Api, store: Store) -> None:
    house_table = banked.table(api, "punto_banco", "cat")
    before = len(every_store_event(store))
    for table_id in (house_table, "no-such-table"):
        answer = banked.bank(api, table_id, "cat", "100.50")
        assert refusal(answer) == (422, "invalid_stake"), table_id
    assert refusal(banked.bank(api, house_table, "cat", "100.00")) == (409, "house_banked")
    assert len(every_store_event(store)) == before
