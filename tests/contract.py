"""Every answer a test receives is checked against the OpenAPI document.

`ContractClient` is a TestClient that, after each request, finds the operation
the request went to and checks that the document lists the answer's status and
content type, that every header it calls required is there, and that the body
matches the documented schema - closed: an object may hold no field the document
does not name (the published document leaves objects open, so that fields can be
added). A problem's `code` must be one the document lists for that status. A HEAD
is held to its GET's status and headers and must have no body; a 405 must say in
`Allow` what the path accepts.

So the whole HTTP test suite, which reaches nearly every refusal the server has,
keeps the document true.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import httpx
import jsonschema_rs
from fastapi import FastAPI
from fastapi.testclient import TestClient

# The document itself, the pages browsing it, and the auditor pages' static assets.
SKIPPED_PATHS = ("/openapi.json", "/docs", "/redoc", "/audit/assets/")


_CONTRACTS: dict[int, Contract] = {}  # by the document's id: apps share theirs


class ContractViolation(AssertionError):
    pass


class ContractClient(TestClient):
    def request(self, method: str, url: httpx._types.URLTypes, **kwargs: Any) -> httpx.Response:  # type: ignore[override]
        response = super().request(method, url, **kwargs)
        assert isinstance(self.app, FastAPI)
        check_answer(self.app, response)
        return response


def check_answer(app: FastAPI, response: httpx.Response) -> None:
    """Raise ContractViolation unless the document describes this answer."""
    request = response.request
    path = request.url.path
    if path.startswith(SKIPPED_PATHS):
        return
    document = app.openapi()
    contract = _CONTRACTS.get(id(document))
    if contract is None:
        contract = _CONTRACTS[id(document)] = Contract(document)
    if response.status_code == 405 and "allow" not in response.headers:
        raise ContractViolation(f"{request.method} {path}: a 405 without Allow")
    # A HEAD is answered as its GET is, without the body (api.md, Conventions).
    head = request.method == "HEAD"
    found = contract.operation("GET" if head else request.method, path)
    if found is None:
        if response.status_code in (404, 405):
            return  # No such route: nothing to hold the answer to.
        raise ContractViolation(f"{request.method} {path}: no operation in the document")
    template, operation = found
    where = f"{request.method} {template} -> {response.status_code}"
    documented = operation["responses"].get(str(response.status_code))
    if documented is None:
        raise ContractViolation(f"{where}: status not in the document: {response.text[:300]}")
    for name, header in documented.get("headers", {}).items():
        if header.get("required") and name.lower() not in response.headers:
            raise ContractViolation(f"{where}: required header {name} is missing")
    content = documented.get("content", {})
    if head and response.content:
        raise ContractViolation(f"{where}: a HEAD answered with a body")
    if not content or head:
        return
    media_type = response.headers.get("content-type", "").split(";")[0].strip()
    if media_type not in content:
        raise ContractViolation(f"{where}: content type {media_type!r}, documented {list(content)}")
    if media_type.endswith("json"):
        key = f"{where} {media_type}"
        errors = contract.errors(key, content[media_type].get("schema", {}), response.json())
        if errors:
            raise ContractViolation(f"{where}: the body does not match the document: {errors}")


class Contract:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.components = {"schemas": close(document.get("components", {}).get("schemas", {}))}
        self.templates = [
            (re.compile("^" + re.sub(r"\{[^/]+\}", "[^/]+", path) + "$"), path)
            for path in document["paths"]
        ]
        self._validators: dict[str, Any] = {}

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]] | None:
        matches = [template for pattern, template in self.templates if pattern.match(path)]
        # The most literal template wins, as FastAPI's routes are declared.
        for template in sorted(matches, key=lambda t: -sum("{" not in p for p in t.split("/"))):
            operation = self.document["paths"][template].get(method.lower())
            if operation is not None:
                return template, operation
        return None

    def errors(self, key: str, schema: dict[str, Any], body: Any) -> list[str]:
        validator = self._validators.get(key)
        if validator is None:
            closed = {**close(schema), "components": self.components}
            validator = self._validators[key] = jsonschema_rs.Draft202012Validator(closed)
        found = validator.iter_errors(body)
        return [f"{error.instance_path}: {error.message}" for error in found][:5]


def close(schema: Any) -> Any:
    """A copy of the schema in which objects with named properties take no others."""
    closed = copy.deepcopy(schema)
    pending = [closed]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if "properties" in node and "allOf" not in node:
                node.setdefault("additionalProperties", False)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return closed
