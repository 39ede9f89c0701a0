"""Sixteen providers' clients betting and winning at once (rules.md 10): every balance
exact at the end, the trial balance zero, and `casino audit verify` holding, each
provider's rounds balanced (stakes taken = rollbacks + wins + the house's result)."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from infra.audit.verify import verify
from infra.store.store import Store
from tests.conftest import OPERATOR, Api
from tests.provider_client import ProviderClient, open_session, register

PROVIDERS = 16
ROUNDS = 6  # per provider's client: a bet, a second bet rolled back, a win, the end


def play(provider: ProviderClient, token: str, failures: list[str]) -> None:
    for n in range(ROUNDS):
        round_id = f"r{n}"
        answers = [
            provider.bet(token, f"b{n}", round_id, "3.00"),
            provider.bet(token, f"c{n}", round_id, "1.00"),
            provider.rollback(token, f"x{n}", f"c{n}"),
            provider.win(token, f"w{n}", round_id, f"{n}.50"),
            provider.end_round(token, round_id),
        ]
        failures += [a.text for a in answers if a.status_code != 200]


def test_sixteen_providers_at_once_leave_every_balance_exact_and_verify_holding(
    client: TestClient, api: Api, store: Store
) -> None:
    clients = []
    for p in range(PROVIDERS):
        provider_id, player_id = f"p{p:02d}", f"player{p:02d}"
        register(client, provider_id)
        api.player(player_id, real="100.00")
        clients.append(
            (ProviderClient(client, provider_id), open_session(client, player_id, provider_id))
        )
    failures: list[str] = []
    threads = [threading.Thread(target=play, args=(c, t, failures)) for c, t in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    # Each round: 3.00 staked, n.50 back; 1.00 staked and rolled back.
    expected = 10_000 - sum(300 - (n * 100 + 50) for n in range(ROUNDS))
    for p in range(PROVIDERS):
        assert api.wallet(f"player{p:02d}")["balance"] == f"{expected // 100}.{expected % 100:02d}"
    balance = api.trial_balance()
    assert balance["total"] == "0.00"
    house = {a["account"]: a["balance"] for a in balance["accounts"]}
    assert (
        house["casino:games:p07"] == f"{(10_000 - expected) // 100}.{(10_000 - expected) % 100:02d}"
    )
    report = verify(store, None, lambda _: None)
    assert report.problems == []
    assert report.rounds >= PROVIDERS * ROUNDS
    index = api.get("/v1/rounds?limit=500", headers=OPERATOR).json()["rounds"]
    external = [r for r in index if r["game"] == "external"]
    assert len(external) == PROVIDERS * ROUNDS
    assert {r["status"] for r in external} == {"closed"}
