"""House punto banco and P2P rounds played before baccarat became one model
(tests/fixtures/store_before_one_model.*) load as they were, verify, answer as then,
and play on.

That code kept its own round aggregate for them (`casino:BaccaratRound`). Its events
must replay to the same rounds, wallets, ledgers and dealer points: every answer the
old code gave comes back unchanged, and the rounds it left open are dealt by today's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.audit.verify import verify
from infra.store.store import Store
from tests.conftest import OPERATOR, SEAL_KEY, Api, StoreFactory
from tests.infra.http.helpers import as_written, serving
from tests.infra.store.test_old_table_store import open_sealed_copy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OLD_STORE = FIXTURES / "store_before_one_model.sqlite"
MANIFEST: dict[str, Any] = json.loads((FIXTURES / "store_before_one_model.json").read_text())
ROUNDS: dict[str, str] = MANIFEST["rounds"]
BANKER_WINS = ["K", "9", "K", "K"]  # player 0, banker 9


@pytest.fixture
def old_store(
    stores: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    yield open_sealed_copy(OLD_STORE, stores, tmp_path, monkeypatch)


def answers_now(api: Api) -> dict[str, Any]:
    """What the API answers today for everything the manifest recorded."""
    players = MANIFEST["wallets"]
    tables = MANIFEST["p2p_tables_seen"]
    return {
        "rounds_seen": {r: api.get(f"/v1/rounds/{r}").json() for r in ROUNDS.values()},
        "audits_seen": {r: api.get(f"/v1/rounds/{r}/audit").json() for r in ROUNDS.values()},
        "p2p_tables_seen": {t: api.get(f"/v1/p2p/tables/{t}").json() for t in tables},
        "wallets": {p: as_written(api.wallet(p)) for p in players},
        "ledgers": {p: api.get(f"/v1/players/{p}/ledger").json() for p in MANIFEST["ledgers"]},
        "dealer_points": {
            p: api.get(f"/v1/players/{p}/dealer-points?mode=real").json()
            for p in MANIFEST["dealer_points"]
        },
        "histories": {
            p: api.get(f"/v1/players/{p}/history?limit=100").json() for p in MANIFEST["histories"]
        },
        "commission": api.get("/v1/reports/commission?mode=real", headers=OPERATOR).json(),
        "trial_balance": api.trial_balance(),
    }


def test_old_baccarat_rounds_verify_and_answer_as_they_did(old_store: Store) -> None:
    report = verify(old_store, None, lambda _: None, public_key=SEAL_KEY.public_key())
    assert (report.problems, report.events) == ([], MANIFEST["events"])
    with serving(old_store) as api:
        now = answers_now(api)
    for part, then in now.items():
        assert then == MANIFEST[part], part


def test_play_goes_on_with_the_rounds_left_open(old_store: Store) -> None:
    wallets = MANIFEST["wallets"]
    with serving(old_store) as api:
        # Ann's house round: the worked example, the player's 3 against the banker's 0.
        house = api.post(f"/v1/rounds/{ROUNDS['house_open']}/deal").json()
        assert (house["status"], house["outcome"], house["net"]["player"]) == (
            "settled",
            "player",
            "-5.00",  # the banker's 10.00 lost, the player's 5.00 won
        )
        assert api.wallet("ann")["balance"] == f"{float(wallets['ann']['balance']) - 5:.2f}"
        # Pat's P2P round: the banker's 30.00 wins; Dan's hold comes back.
        p2p = api.post(f"/v1/rounds/{ROUNDS['p2p_open']}/deal").json()
        assert (p2p["status"], p2p["outcome"], p2p["commission"]) == ("settled", "banker", "0.53")
        assert api.wallet("dan")["held"] == "0.00"
        # Dan, down to 35 dealer points, may deal no more at a type II table (50)
        table_id = MANIFEST["p2p_tables"]["dan"]
        confirm = f"/v1/p2p/tables/{table_id}/confirm"
        refused = api.post(confirm, {"shoe": BANKER_WINS})
        assert (refused.status_code, refused.json()["shortfall"]) == (409, 15)
        # until an operator gives him 15; then he deals again by today's code.
        points = {"mode": "real", "change": 15, "reason": "back to deal"}
        api.post("/v1/players/dan/dealer-points/adjustments", points, headers=OPERATOR)
        confirmed = api.post(confirm, {"shoe": BANKER_WINS})
        assert confirmed.status_code == 201, confirmed.text
        round_id = confirmed.json()["round_id"]
        bet = api.post(f"/v1/rounds/{round_id}/bets", {"spot": "player", "amount": "10.00"})
        assert bet.status_code == 201, bet.text
        dealt = api.post(f"/v1/rounds/{round_id}/deal").json()
        assert (dealt["status"], dealt["net"]) == (
            "settled",
            {"player": "-10.00", "dealer": "9.82", "casino": "0.18"},
        )
        assert api.trial_balance()["total"] == "0.00"
    assert verify(old_store, None, lambda _: None, public_key=SEAL_KEY.public_key()).problems == []
