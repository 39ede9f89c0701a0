"""A provider belongs to one tenant (rules.md 11): its signed calls, which carry no
key, reach the tenant that registered it, and its id is unique across the process."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from tests.infra.tenants.conftest import Brand
from tests.provider_client import SECRET, ProviderClient

PROVIDER = {"provider_id": "acme", "name": "Acme", "secrets": [SECRET], "bonus_allowed": False}


def _register(client: TestClient, brand: Brand) -> int:
    answer = client.post("/v1/providers", json=PROVIDER, headers=brand.headers("operator"))
    return answer.status_code


def _player_with_session(client: TestClient, brand: Brand, player_id: str) -> str:
    body = {"player_id": player_id, "display_name": player_id.title()}
    assert client.post("/v1/players", json=body, headers=brand.headers()).status_code == 201
    deposit = {"mode": "real", "amount": "40.00"}
    path = f"/v1/players/{player_id}/deposits"
    assert client.post(path, json=deposit, headers=brand.headers()).status_code == 201
    session = {"provider_id": "acme", "game_id": "starburst", "mode": "real"}
    path = f"/v1/players/{player_id}/game-sessions"
    answer = client.post(path, json=session, headers=brand.headers())
    assert answer.status_code == 201, answer.text
    token: str = answer.json()["token"]
    return token


def test_a_providers_calls_reach_the_tenant_that_registered_it(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    # Beta is not the first tenant, to which a request with no key would go.
    alpha, beta = brands["alpha"], brands["beta"]
    assert _register(served, beta) == 201
    token = _player_with_session(served, beta, "alice")
    acme = ProviderClient(served)
    bet = acme.bet(token, "tx-1", "r-1", "15.00")
    assert bet.status_code == 200, bet.text
    assert bet.json()["cash"] == "25.00"
    wallet = served.get("/v1/players/alice/wallets/real", headers=beta.headers())
    assert wallet.json()["balance"] == "25.00"
    # Alpha has no alice: the provider's money moved in beta's books only.
    assert served.get("/v1/players/alice/wallets/real", headers=alpha.headers()).status_code == 404


def test_a_provider_id_another_tenant_holds_is_refused_and_changes_nothing(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    alpha, beta = brands["alpha"], brands["beta"]
    assert _register(served, beta) == 201
    before = alpha.store.app.recorder.max_notification_id()
    refused = served.post("/v1/providers", json=PROVIDER, headers=alpha.headers("operator"))
    assert (refused.status_code, refused.json()["code"]) == (409, "provider_exists")
    assert alpha.store.app.recorder.max_notification_id() == before
    # A provider no tenant registered is unknown to every tenant: a bad signature.
    stranger = ProviderClient(served, provider_id="stranger-" + uuid.uuid4().hex[:8])
    answer = stranger.balance("no-token")
    assert (answer.status_code, answer.json()["code"]) == (401, "invalid_signature")
