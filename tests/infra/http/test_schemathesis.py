"""Schemathesis against the server, as a client team would run it: requests made up
from the OpenAPI document, valid and invalid, to every operation, each answer held
to the document. Bounded: a few examples per operation, on SQLite only (the
document is the same on both stores), with the server's workers running.

The store holds a player with money and a table, so that the document's examples
(player `alice`) reach answers beyond 404."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from infra.config import load_settings
from infra.http.app import create_app
from tests.conftest import StoreFactory

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES_PER_OPERATION = 8
WAIT_SECONDS_MAX = 0.2


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = Path(tmp_path_factory.mktemp("schemathesis"))
    stores = StoreFactory("sqlite", folder)
    store = stores.open()
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 500_000)
    store.app.register_player("bob", "Bob")
    store.app.deposit("bob", "real", 500_000)
    # Its own witness file: this module's server starts before `own_witness` runs.
    settings = load_settings(idle_timeout_seconds=3600, witness=str(folder / "witness.jsonl"))
    app = create_app(store, settings, background=True)
    with TestClient(app) as client:  # its lifespan runs the projector and timeout workers
        yield client
    stores.close_all()


def key_for(operation: Any) -> dict[str, str]:
    """A key of the first role the operation admits (none for the open routes)."""
    security = operation.definition.raw.get("security") or []
    if not security:
        return {}
    role = next(iter(security[0]))
    return {"Authorization": f"Bearer dev-{role}"}


def send(client: TestClient, case: Any) -> Any:
    """The case through the app's own test client (schemathesis's would run the app's
    lifespan, and so start its workers, once per request)."""
    sent = case.as_transport_kwargs(base_url=str(client.base_url))
    body = {key: sent[key] for key in ("json", "data") if key in sent}
    if "data" in body:
        body = {"content": body["data"]}
    headers = {**sent["headers"], **key_for(case.operation)}
    params = dict(sent.get("params") or {})
    if isinstance(params.get("wait"), int | float):  # the feed's long poll, up to 30 s:
        params["wait"] = min(params["wait"], WAIT_SECONDS_MAX)  # kept short here
    return client.request(sent["method"], sent["url"], params=params, headers=headers, **body)


def exercise(
    client: TestClient, operation: Any, mode: GenerationMode, statuses: Counter[int]
) -> None:
    """Examples of the operation (its documented ones first), each answer checked."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        database=None,
        derandomize=True,
    )
    def run(case: Any) -> None:
        response = send(client, case)
        case.validate_response(response, checks=CHECKS)
        statuses[response.status_code] += 1

    run()


def test_every_answer_is_the_one_the_document_describes(served: TestClient) -> None:
    contract = schemathesis.openapi.from_dict(served.get("/openapi.json").json())
    operations = [result.ok() for result in contract.get_all_operations()]
    statuses: Counter[int] = Counter()
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            exercise(served, operation, mode, statuses)
    print(f"schemathesis: {len(operations)} operations, answers by status {dict(statuses)}")
    assert len(operations) >= 30
    assert sum(statuses.values()) >= len(operations) * EXAMPLES_PER_OPERATION
    assert statuses[200] + statuses[201] > 0  # some got through, not only refusals
