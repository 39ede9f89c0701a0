"""Helpers for HTTP tests that check what a round left behind: each side's books (wallet,
holds, dealer points, game history), the commission report and the round's audit trail.

Round-building helpers stay where they are (tests/infra/test_http_p2p.py,
tests/infra/test_http_blackjack.py); import them from there.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from infra.config import load_settings
from infra.http.app import create_app
from infra.store.store import Store
from tests.conftest import OPERATOR, Api
from tests.contract import ContractClient

History = tuple[str, str, str, str, str, str, str]
"""One game-history entry: round_id, role, round status, net, commission, balance
before, balance after."""


@dataclass(frozen=True)
class Books:
    """One player's real-money books as the API shows them."""

    balance: str
    held: str = "0.00"
    points: int = 0
    last_round: tuple[str, str, str] | None = None  # round_id, net, commission
    point_moves: list[tuple[str, int, str]] = field(default_factory=list)  # round_id, change, role
    history: list[History] = field(default_factory=list)  # newest first


def books(api: Api, player_id: str) -> Books:
    """Read the wallet, the dealer points and the game history, checking they agree."""
    wallet = api.wallet(player_id)
    cents = {key: round(float(wallet[key]) * 100) for key in ("balance", "held", "available")}
    assert cents["available"] == cents["balance"] - cents["held"], wallet
    points = api.get(f"/v1/players/{player_id}/dealer-points?mode=real")
    assert points.status_code == 200, points.text
    assert points.json()["points"] == wallet["dealer_points"]
    answer = api.get(f"/v1/players/{player_id}/history?limit=100")
    assert answer.status_code == 200, answer.text
    history = [
        (
            entry["round_id"],
            entry["role"],
            entry["round"]["status"],
            entry["net"],
            entry["commission"],
            entry["balance_before"],
            entry["balance_after"],
        )
        for entry in answer.json()["rounds"]
    ]
    last = wallet["last_round"]
    return Books(
        balance=wallet["balance"],
        held=wallet["held"],
        points=wallet["dealer_points"],
        last_round=None if last is None else (last["round_id"], last["net"], last["commission"]),
        point_moves=[
            (entry["round_id"], entry["change"], entry["role"])
            for entry in points.json()["entries"]
            if entry["round_id"] is not None
        ],
        history=history,
    )


def commission(api: Api) -> tuple[str, int]:
    """The commission report's total and how many rounds paid it; the trial balance,
    read on the way, must total zero."""
    assert api.trial_balance()["total"] == "0.00"
    answer = api.get("/v1/reports/commission?mode=real", headers=OPERATOR)
    assert answer.status_code == 200, answer.text
    report = answer.json()
    return report["total"], sum(day["rounds"] for day in report["days"])


def round_of(api: Api, round_id: str) -> dict[str, Any]:
    answer = api.get(f"/v1/rounds/{round_id}")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def audit_of(api: Api, round_id: str) -> list[dict[str, Any]]:
    answer = api.get(f"/v1/rounds/{round_id}/audit")
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


# A house or P2P round is a coup (casino:Coup.*); one stored before baccarat was one
# model shows its events as stored (casino:BaccaratRound.*).
ROUND_TOPICS = ("casino:Coup.", "casino:BaccaratRound.", "casino:BlackjackRound.")


def round_events(api: Api, round_id: str) -> list[dict[str, Any]]:
    """The round's own events from its audit trail (which holds the wallets' too)."""
    return [e for e in audit_of(api, round_id) if e["topic"].startswith(ROUND_TOPICS)]


def assert_voided(api: Api, round_id: str, reason: str) -> None:
    """Voided for `reason`: the seed revealed, no card dealt, and in the wallets only
    holds, each released in full - no result, commission or points."""
    round_ = round_of(api, round_id)
    assert (round_["status"], round_["seed"] is not None) == ("voided", True)
    events = audit_of(api, round_id)
    own = [e for e in events if e["topic"].startswith(ROUND_TOPICS)]
    shoe = own[0]["data"]["shoe_prefix"]  # what the opening committed to, shown once over
    assert own[-1]["data"] == {"reason": reason, "seed": round_["seed"], "shoe_prefix": shoe}
    assert own[-1]["type"] == "Voided"
    assert "CardDealt" not in [e["type"] for e in own]
    wallets = [e for e in events if e["topic"].startswith("casino:Wallet.")]
    assert {e["type"] for e in wallets} <= {"FundsHeld", "HoldReleased"}
    sign = {"FundsHeld": 1, "HoldReleased": -1}
    assert sum(sign[e["type"]] * e["data"]["amount_cents"] for e in wallets) == 0


def decisions(api: Api, round_id: str) -> list[tuple[int, int, str, str]]:
    """Every blackjack decision of the round in order: box, hand, action, by whom."""
    return [
        (e["data"]["box"], e["data"]["hand"], e["data"]["action"], e["data"]["by"])
        for e in audit_of(api, round_id)
        if e["type"] == "PlayerActed"
    ]


def later(seconds: float) -> datetime.datetime:
    """A clock reading this long from now, for the workers' `now`."""
    return datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)


@contextmanager
def serving(store: Store, *, background: bool = False, **settings: Any) -> Iterator[Api]:
    """The HTTP API on `store`, as a (re)started server process would serve it."""
    loaded = load_settings(database_url=store.url, **settings)
    with ContractClient(create_app(store, loaded, background=background)) as client:
        yield Api(client)


def as_written(wallet: dict[str, Any]) -> dict[str, Any]:
    """A wallet's answer as stores written before bonus money (issue 39) recorded it: the
    same, but for `bonus`, which is added, and null for every wallet from then."""
    assert wallet.pop("bonus") is None
    return wallet
