"""The OpenAPI document is the contract: what a client generating code from it sees.

(Every answer of the HTTP tests is also checked against it: tests/contract.py.)"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from infra.config import load_settings
from infra.http.app import create_app
from tests.conftest import StoreFactory

COMMANDS = ("post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, Any]]]:
    stores = StoreFactory("sqlite", Path(tmp_path_factory.mktemp("openapi")))
    app = create_app(stores.open(), load_settings(), background=False)
    with TestClient(app) as client:
        yield app, client.get("/openapi.json").json()
    stores.close_all()


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_route_of_the_app_is_in_the_document(served: tuple[Any, dict[str, Any]]) -> None:
    app, document = served
    routes = {
        (context.path_format, method.lower())
        for context in iter_route_contexts(app.routes)
        if isinstance(context.original_route, APIRoute) and context.include_in_schema
        for method in context.methods
    }
    documented = {(path, method) for path, method, _ in operations(document)}
    assert routes == documented
    assert len(documented) >= 30


def test_the_documents_version_is_the_packages(served: tuple[Any, dict[str, Any]]) -> None:
    with (Path(__file__).parents[3] / "pyproject.toml").open("rb") as project:
        declared = tomllib.load(project)["project"]
    assert served[1]["info"]["version"] == version(declared["name"])


def test_schemas_are_named_for_what_they_are(served: tuple[Any, dict[str, Any]]) -> None:
    names = set(served[1]["components"]["schemas"])
    assert not [name for name in names if "__" in name or "-" in name]
    assert {"Wallet", "Movement", "Round", "BaccaratRound", "BlackjackRound", "Problem"} <= names
    assert "HTTPValidationError" not in names


def test_every_success_answer_has_a_schema(served: tuple[Any, dict[str, Any]]) -> None:
    for path, method, operation in operations(served[1]):
        successes = {s: r for s, r in operation["responses"].items() if s.startswith("2")}
        assert len(successes) == 1, (path, method)
        for answer in successes.values():
            content = answer["content"]
            schema = next(iter(content.values()))["schema"]
            assert schema, (path, method)


def test_every_refusal_is_problem_json_listing_its_codes(
    served: tuple[Any, dict[str, Any]],
) -> None:
    for path, method, operation in operations(served[1]):
        refusals = {s: r for s, r in operation["responses"].items() if s[0] in "45"}
        assert "400" in refusals, (path, method)  # an X-Request-ID out of bounds, at least
        for status, answer in refusals.items():
            schema = answer["content"]["application/problem+json"]["schema"]
            assert schema["allOf"] == [{"$ref": "#/components/schemas/Problem"}]
            assert schema["properties"]["status"] == {"const": int(status)}
            assert schema["properties"]["code"]["enum"], (path, method, status)


def test_commands_name_their_roles_key_and_headers(served: tuple[Any, dict[str, Any]]) -> None:
    document = served[1]
    assert set(document["components"]["securitySchemes"]) == {"service", "operator", "auditor"}
    withdraw = document["paths"]["/v1/players/{player_id}/withdrawals"]["post"]
    assert withdraw["security"] == [{"service": []}, {"operator": []}]
    key = next(p for p in withdraw["parameters"] if p["name"] == "Idempotency-Key")
    assert (key["in"], key["required"]) == ("header", True)
    headers = withdraw["responses"]["201"]["headers"]
    assert {"Casino-Position", "Idempotent-Replayed", "X-Request-ID"} <= set(headers)
    codes = withdraw["responses"]["409"]["content"]["application/problem+json"]["schema"]
    assert codes["properties"]["code"]["enum"] == ["insufficient_funds"]
    adjust = document["paths"]["/v1/players/{player_id}/dealer-points/adjustments"]["post"]
    assert adjust["security"] == [{"operator": []}]
    assert "Retry-After" in adjust["responses"]["503"]["headers"]


def test_reads_need_no_idempotency_key_and_say_who_may_read(
    served: tuple[Any, dict[str, Any]],
) -> None:
    document = served[1]
    for path, method, operation in operations(document):
        names = {p["name"] for p in operation.get("parameters", [])}
        # A provider's call is keyed by its transaction id, and signed (rules.md 10).
        keyed = method in COMMANDS and not path.startswith("/v1/wallet/")
        assert ("Idempotency-Key" in names) == keyed, (path, method)
        assert ("X-Casino-Signature" in names) == path.startswith("/v1/wallet/"), path
    report = document["paths"]["/v1/reports/trial-balance"]["get"]
    assert report["security"] == [{"operator": []}, {"auditor": []}]
    assert "security" not in document["paths"]["/v1/health"]["get"]


def test_request_bodies_show_examples(served: tuple[Any, dict[str, Any]]) -> None:
    schemas = served[1]["components"]["schemas"]
    assert schemas["MoneyMovement"]["properties"]["amount"]["examples"] == ["10.00"]
    assert schemas["NewPlayer"]["properties"]["player_id"]["examples"] == ["alice"]
