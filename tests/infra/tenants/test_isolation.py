"""Two tenants in one process (rules.md 11): a key of one sees nothing of the other's.

Every route that names a player, round or table is tried with the ids of the other
tenant's and answers 404 as if they were absent, changing nothing; the lists and
reports of one tenant hold nothing of the other's; each tenant's log is sealed with
its own key."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from infra.http.app import create_app
from infra.http.tenants import DuplicateKey, TenantApps
from tests.conftest import every_store_event, seat_p2p_table
from tests.infra.tenants.conftest import Brand
from tests.provider_client import SECRET

# A body each command would take, so that its answer is about the ids it names.
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/v1/players/{player_id}/deposits"): {"mode": "real", "amount": "1.00"},
    ("POST", "/v1/players/{player_id}/withdrawals"): {"mode": "real", "amount": "1.00"},
    ("POST", "/v1/players/{player_id}/dealer-points/adjustments"): {
        "mode": "real",
        "change": 5,
        "reason": "goodwill",
    },
    ("POST", "/v1/players/{player_id}/exclusions"): {"kind": "time_out", "days": 3},
    ("PUT", "/v1/players/{player_id}/limits"): {"deposit": {"day": "100.00"}},
    ("POST", "/v1/rounds/{round_id}/bets"): {"spot": "banker", "amount": "10.00"},
    ("POST", "/v1/rounds/{round_id}/actions"): {"box": 1, "hand": 1, "action": "stand"},
    ("POST", "/v1/rounds/{round_id}/banco"): {"player_id": "alice"},
    ("POST", "/v1/tables/{table_id}/seats"): {"player_id": "alice", "seat": "1"},
    ("POST", "/v1/tables/{table_id}/leave"): {"player_id": "alice"},
    ("POST", "/v1/tables/{table_id}/bank"): {"player_id": "alice", "amount": "100.00"},
    ("POST", "/v1/tables/{table_id}/bank/decline"): {"player_id": "alice"},
    ("POST", "/v1/tables/{table_id}/bank/withdraw"): {"player_id": "alice"},
    ("POST", "/v1/p2p/tables/{table_id}/leave"): {"player_id": "pat"},
    ("PUT", "/v1/providers/{provider_id}/secrets"): {"secrets": [SECRET]},
    ("POST", "/v1/players/{player_id}/bonuses"): {"amount": "5.00", "wagering": 1,
                                                  "expires_in_days": 1},
    ("POST", "/v1/players/{player_id}/game-sessions"): {"provider_id": "acme",
                                                        "game_id": "g", "mode": "real"},
}  # fmt: skip


def alpha_world(client: TestClient, alpha: Brand) -> dict[str, str]:
    """Alpha's player, house round (dealt), P2P table and American table: their ids."""
    app = alpha.store.app
    p2p_table = seat_p2p_table(app)
    player = {"player_id": "alice", "display_name": "Alice"}
    assert client.post("/v1/players", json=player, headers=alpha.headers()).status_code == 201
    deposit = {"mode": "real", "amount": "500.00"}
    assert (
        client.post("/v1/players/alice/deposits", json=deposit, headers=alpha.headers()).status_code
        == 201
    )
    opened = client.post(
        "/v1/baccarat/rounds", json={"player_id": "alice", "mode": "real"}, headers=alpha.headers()
    )
    round_id = opened.json()["round_id"]
    bet = {"spot": "banker", "amount": "10.00"}
    assert (
        client.post(f"/v1/rounds/{round_id}/bets", json=bet, headers=alpha.headers()).status_code
        == 201
    )
    assert client.post(f"/v1/rounds/{round_id}/deal", headers=alpha.headers()).status_code == 200
    table = client.post(
        "/v1/tables", json={"game": "punto_banco", "mode": "real"}, headers=alpha.headers()
    )
    assert table.status_code == 201, table.text
    provider = {"provider_id": "acme", "name": "Acme", "secrets": [SECRET], "bonus_allowed": True}
    registered = client.post("/v1/providers", json=provider, headers=alpha.headers("operator"))
    assert registered.status_code == 201, registered.text
    grant = {"amount": "10.00", "wagering": 5, "expires_in_days": 7}
    granted = client.post(
        "/v1/players/alice/bonuses", json=grant, headers=alpha.headers("operator")
    )
    assert granted.status_code == 201, granted.text
    return {
        "provider_id": "acme",
        "bonus_id": granted.json()["bonus_id"],
        "player_id": "alice",
        "round_id": round_id,
        "table_id": table.json()["table_id"],
        "p2p_table_id": p2p_table,
        "mode": "real",
        "spot_or_box": "banker",
        "name": "audit.js",
    }


def test_every_route_with_the_other_tenants_ids_is_404_and_changes_nothing(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    alpha, beta = brands["alpha"], brands["beta"]
    ids = alpha_world(served, alpha)
    alpha_events, beta_events = (
        len(every_store_event(alpha.store)),
        len(every_store_event(beta.store)),
    )
    document = served.get("/openapi.json").json()
    calls = []
    for template, methods in document["paths"].items():
        if "{" not in template or template.startswith("/audit/"):
            continue  # the auditor's static pages, holding no data: the same for anyone
        if template.startswith("/v1/wallet/"):
            continue  # signed, no key: tests/infra/tenants/test_providers.py
        for method in (m.upper() for m in methods if m in ("get", "post", "put", "delete")):
            values = {**ids, "table_id": ids["p2p_table_id"]} if "/p2p/" in template else ids
            path = template.format(**values)
            operator = (
                "adjustments" in path, path.endswith("/audit"), "/providers/" in path,
                path.endswith("/bonuses") and method == "POST",
            )  # fmt: skip
            role = "operator" if any(operator) else "service"
            calls.append((method, template, path, role, BODIES.get((method, template))))
    wrong = []
    for method, template, path, role, body in calls:  # beta's key on alpha's ids
        theirs = served.request(method, path, json=body, headers=beta.headers(role))
        if theirs.status_code != 404:
            wrong.append((method, template, theirs.status_code, theirs.text[:150]))
    assert wrong == []
    assert len(calls) >= 30
    assert len(every_store_event(alpha.store)) == alpha_events
    assert len(every_store_event(beta.store)) == beta_events
    for method, template, path, role, _ in calls:  # the ids are alpha's indeed
        if method == "GET":
            mine = served.get(path, headers=alpha.headers(role))
            assert mine.status_code == 200, (template, mine.text[:150])


def test_a_tenants_lists_and_reports_hold_nothing_of_the_other(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    alpha, beta = brands["alpha"], brands["beta"]
    ids = alpha_world(served, alpha)
    rounds = served.get("/v1/rounds", headers=beta.headers()).json()
    assert ids["round_id"] not in str(rounds)
    feed = served.get("/v1/events", headers=beta.headers("auditor")).text
    assert "alice" not in feed and ids["round_id"] not in feed
    balance = served.get("/v1/reports/trial-balance?mode=real", headers=beta.headers("operator"))
    assert balance.status_code == 200
    assert "500.00" not in balance.text
    assert served.get("/v1/significant-events", headers=beta.headers("operator")).status_code == 200


def test_one_player_id_in_two_tenants_is_two_players(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    for brand, amount in ((brands["alpha"], "30.00"), (brands["beta"], "70.00")):
        player = {"player_id": "alice", "display_name": "Alice"}
        assert served.post("/v1/players", json=player, headers=brand.headers()).status_code == 201
        body = {"mode": "real", "amount": amount}
        assert (
            served.post(
                "/v1/players/alice/deposits", json=body, headers=brand.headers()
            ).status_code
            == 201
        )
    for brand, amount in ((brands["alpha"], "30.00"), (brands["beta"], "70.00")):
        wallet = served.get("/v1/players/alice/wallets/real", headers=brand.headers()).json()
        assert wallet["balance"] == amount


def test_a_key_unknown_to_every_tenant_is_401_and_the_dev_keys_reach_no_tenant(
    served: TestClient,
) -> None:
    for key in ("nobody", "dev-service"):
        answer = served.get("/v1/players/alice", headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 401
        assert answer.json()["code"] == "unauthenticated"


def test_a_key_of_two_tenants_is_refused(brands: dict[str, Brand]) -> None:
    alpha, beta = brands["alpha"], brands["beta"]
    shared = beta.settings.model_copy(update={"api_keys": "service=alpha-service"})
    apps = {
        "alpha": create_app(alpha.store, alpha.settings, background=False, tenant="alpha"),
        "beta": create_app(beta.store, shared, background=False, tenant="beta"),
    }
    with pytest.raises(DuplicateKey, match="alpha and beta share an API key"):
        TenantApps(apps)
