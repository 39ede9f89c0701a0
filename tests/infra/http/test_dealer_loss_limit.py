"""A P2P dealer past a loss limit is dealt no new round (rules.md 7), through the HTTP
API on both stores: a manual confirm is a 409 `loss_limit_exceeded` naming the limit,
what is left and when it resets; with auto-confirm the settling save opens none and the
table says why. A dealer at or under the limit deals on as before."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import pytest

from infra.store.store import Store
from tests.conftest import SERVICE, Api
from tests.domain.tables.test_steps import NOW, Clock
from tests.infra.http.test_p2p import bet, confirm, dealer, join, sit

DAY = datetime.timedelta(days=1)
P2P_PLAYER_WINS = ["9", "K", "K", "K"]  # Player 9, Banker 0
HOUSE_PLAYER_WINS = ["10", "K", "3", "10", "10", "Q"]  # house baccarat: player 3, banker 0


@pytest.fixture
def clock(store: Store) -> Clock:
    clock = Clock()
    store.app.clock = clock
    return clock


def loss_limit(api: Api, player_id: str, per_day: str) -> None:
    answer = api.client.put(
        f"/v1/players/{player_id}/limits",
        json={"mode": "real", "loss": {"day": per_day}},
        headers={**SERVICE, "Idempotency-Key": uuid.uuid4().hex},
    )
    assert answer.status_code == 200, answer.text


def played(api: Api, round_id: str) -> dict[str, Any]:
    """Pat stakes 10.00 on the player and deals."""
    assert bet(api, round_id, "player", "10.00").status_code == 201
    answer = api.post(f"/v1/rounds/{round_id}/deal")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


@pytest.mark.parametrize(
    ("per_day", "refused"),
    [("10.00", True), ("10.17", True), ("10.18", False), ("50.00", False)],
)
def test_a_manual_confirm_past_the_dealers_loss_limit_is_refused(
    api: Api, clock: Clock, per_day: str, refused: bool
) -> None:
    # Given Dan dealing by hand, with a loss limit per day, who loses a round: the
    # player's 10.00 and the 1.75% commission, 10.18,
    dealer(api)
    api.player("pat", real="100.00")
    loss_limit(api, "dan", per_day)
    table_id = sit(api).json()["table_id"]
    assert join(api).status_code == 201
    first = confirm(api, table_id, P2P_PLAYER_WINS).json()["round_id"]
    assert played(api, first)["net"]["dealer"] == "-10.18"
    # when he confirms the next round,
    answer = confirm(api, table_id, P2P_PLAYER_WINS)
    # then past the limit it is refused, naming it, and nothing is held or opened;
    if refused:
        assert answer.status_code == 409
        body = answer.json()
        assert {k: body[k] for k in ("code", "limit", "period", "remaining", "resets_at")} == {
            "code": "loss_limit_exceeded",
            "limit": per_day,
            "period": "day",
            "remaining": "0.00",
            "resets_at": (NOW + DAY).isoformat(timespec="microseconds"),
        }
        assert "dan has lost 10.18 within the day" in body["detail"]
        assert api.get(f"/v1/p2p/tables/{table_id}").json()["round_id"] is None
        assert api.wallet("dan")["held"] == "0.00"
        # once the loss has left the window, he deals again.
        clock.now = NOW + DAY
        answer = confirm(api, table_id, P2P_PLAYER_WINS)
    # at or under the limit (and once it resets) the round opens as ever.
    assert answer.status_code == 201, answer.text
    assert api.wallet("dan")["held"] == "1803.50"


def test_auto_confirm_opens_no_round_once_the_dealer_is_past_a_loss_limit(
    api: Api, clock: Clock
) -> None:
    # Given Dan, who lost 20.00 as a player today under a loss limit of 50.00 a day,
    dealer(api)
    api.player("pat", real="100.00")
    loss_limit(api, "dan", "50.00")
    house = api.post(
        "/v1/baccarat/rounds", {"player_id": "dan", "mode": "real", "shoe": HOUSE_PLAYER_WINS}
    ).json()["round_id"]
    assert bet(api, house, "banker", "20.00").status_code == 201
    assert api.post(f"/v1/rounds/{house}/deal").json()["outcome"] == "player"
    # dealing with auto-confirm, Pat seated and the first round confirmed on its own,
    table_id = sit(api, auto=True).json()["table_id"]
    first = join(api).json()["round_id"]
    assert first is not None
    # when the limit is lowered to 10.00 (at once) and the round is played, whatever
    # its outcome (Dan can win 9.82 of it at most: still 10.18 down on the day),
    loss_limit(api, "dan", "10.00")
    dealt = played(api, first)
    # then the save that settled it opened no next round: the table waits and says why,
    assert dealt["status"] == "settled" and dealt["next_round"] is None
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert (table["round_id"], table["current_round"], table["auto_confirm"]) == (
        None,
        None,
        False,
    )
    assert table["notice"].startswith("auto-confirm stopped: dan has lost")
    assert "past the loss limit per day of 10.00" in table["notice"]
    assert api.wallet("dan")["held"] == "0.00"
    # and confirming by hand is refused as a loss limit, as any.
    refused = confirm(api, table_id)
    assert (refused.status_code, refused.json()["code"]) == (409, "loss_limit_exceeded")


def test_auto_confirm_goes_on_for_a_dealer_under_the_loss_limit(api: Api, clock: Clock) -> None:
    dealer(api)
    api.player("pat", real="100.00")
    loss_limit(api, "dan", "500.00")  # far more than a $10 round can cost him
    table_id = sit(api, auto=True).json()["table_id"]
    first = join(api).json()["round_id"]
    following = played(api, first)["next_round"]
    assert following is not None and following["status"] == "open"
    table = api.get(f"/v1/p2p/tables/{table_id}").json()
    assert (table["round_id"], table["auto_confirm"]) == (following["round_id"], True)
    assert api.wallet("dan")["held"] == "1803.50"
