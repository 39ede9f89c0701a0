"""The methods a path accepts, as a client finds them: HEAD wherever GET is, answered
as the GET is without its body, and a 405 whose `Allow` lists what the path takes."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.routing import iter_route_contexts

from infra.config import load_settings
from infra.http.app import create_app
from tests.conftest import AUDITOR, SERVICE, StoreFactory
from tests.contract import ContractClient

# Path parameters filled in so that the reads find something (or answer 404 alike).
FILLED = {"player_id": "alice", "mode": "real", "provider_id": "acme"}
# Answers that change from one request to the next: only their status and type compared.
LIVE_PATHS = ("/metrics", "/v1/health", "/v1/events", "/v1/significant-events")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ContractClient]:
    stores = StoreFactory("sqlite", Path(tmp_path_factory.mktemp("methods")))
    store = stores.open()
    store.app.register_player("alice", "Alice")  # her wallets: reads that find something
    with ContractClient(create_app(store, load_settings(), background=False)) as client:
        yield client
    stores.close_all()


def concrete(template: str) -> str:
    return re.sub(r"\{([^}:]+)(:[^}]+)?\}", lambda m: FILLED.get(m.group(1), "x1"), template)


def methods_by_path(client: ContractClient) -> dict[str, set[str]]:
    """Every route's path (concrete) and the methods its routes name."""
    found: dict[str, set[str]] = defaultdict(set)
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        if route.methods:
            found[concrete(route.path_format)] |= set(route.methods)
    return found


def test_every_get_route_answers_head_as_its_get_without_the_body(
    client: ContractClient,
) -> None:
    gettable = [path for path, methods in methods_by_path(client).items() if "GET" in methods]
    assert len(gettable) >= 25
    for path in gettable:
        got = client.get(path, headers=AUDITOR)
        head = client.head(path, headers=AUDITOR)  # held to the GET's document too
        assert head.status_code == got.status_code, path
        assert head.content == b"", path
        assert head.headers.get("content-type") == got.headers.get("content-type"), path
        if not path.startswith(LIVE_PATHS):
            assert head.headers["content-length"] == got.headers["content-length"], path


def test_a_head_of_a_wallet_carries_its_headers_and_a_refusal_too(
    client: ContractClient,
) -> None:
    head = client.head("/v1/players/alice/wallets/real", headers=SERVICE)
    got = client.get("/v1/players/alice/wallets/real", headers=SERVICE)
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["content-length"] == str(len(got.content))
    assert "x-request-id" in head.headers
    unknown = client.head("/v1/players/nobody/wallets/real", headers=SERVICE)
    assert (unknown.status_code, unknown.content) == (404, b"")
    assert unknown.headers["content-type"] == "application/problem+json"
    assert client.head("/v1/players/alice/wallets/real").status_code == 401


def test_every_405_lists_in_allow_every_method_the_path_accepts(client: ContractClient) -> None:
    for path, methods in methods_by_path(client).items():
        allowed = methods | ({"HEAD"} if "GET" in methods else set())
        refused = client.request("PATCH", path, headers=SERVICE)  # no route takes a PATCH
        assert refused.status_code == 405, path
        assert refused.headers["allow"] == ", ".join(sorted(allowed)), path
        problem = refused.json()
        assert (problem["status"], problem["code"]) == (405, "method_not_allowed"), path
        assert refused.headers["content-type"] == "application/problem+json"


def test_a_path_whose_get_and_put_are_routes_of_their_own_allows_both(
    client: ContractClient,
) -> None:
    # FastAPI names only the first route a path matches; the limits have two.
    refused = client.delete("/v1/players/alice/limits", headers=SERVICE)
    assert (refused.status_code, refused.headers["allow"]) == (405, "GET, HEAD, PUT")
    head_of_a_command = client.head("/v1/players", headers=SERVICE)
    assert (head_of_a_command.status_code, head_of_a_command.headers["allow"]) == (405, "POST")
