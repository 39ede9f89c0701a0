"""The prose about the API cannot drift from the OpenAPI document: docs/api-reference.md is
written from it, and the route table of docs/guide.md names exactly its routes, with only
fields its schemas have."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.http.api_doc import current_document, write

ROOT = Path(__file__).parents[3]
ROW = re.compile(r"^\| `(GET|POST|PUT|PATCH|DELETE) ([^`?]+)[^`]*` \|(.*)$")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return current_document()


def guide_routes() -> Iterator[tuple[str, str, str]]:
    for line in (ROOT / "docs" / "guide.md").read_text().splitlines():
        match = ROW.match(line)
        if match:
            yield match.group(1).lower(), match.group(2), match.group(3)


def test_docs_api_md_is_written_from_the_document(document: dict[str, Any]) -> None:
    written = (ROOT / "docs" / "api-reference.md").read_text()
    assert written == write(document), "docs/api-reference.md is out of date: run `make api-doc`"


def test_the_guide_route_table_names_every_route_and_no_other(
    document: dict[str, Any],
) -> None:
    documented = {(m, p) for p, methods in document["paths"].items() for m in methods}
    listed = {(method, path) for method, path, _ in guide_routes()}
    assert not documented - listed, f"routes missing from docs/guide.md: {documented - listed}"
    assert not listed - documented, (
        f"docs/guide.md lists routes that are not: {listed - documented}"
    )


def names_in(schema: Any, schemas: dict[str, Any], seen: set[str] | None = None) -> set[str]:
    """Every property name reachable from a schema."""
    seen = set() if seen is None else seen
    found: set[str] = set()
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                seen.add(name)
                found |= names_in(schemas[name], schemas, seen)
        found |= set(schema.get("properties", {}))
        for value in schema.values():
            found |= names_in(value, schemas, seen)
    elif isinstance(schema, list):
        for value in schema:
            found |= names_in(value, schemas, seen)
    return found


def test_the_fields_the_guide_names_are_in_the_answers_and_bodies(
    document: dict[str, Any],
) -> None:
    schemas = document["components"]["schemas"]
    for method, path, what in guide_routes():
        operation = document["paths"][path][method]
        described = {**operation.get("requestBody", {}), **operation["responses"]}
        known = names_in(described, schemas) | {p["name"] for p in operation.get("parameters", [])}
        named = set()
        for braces in re.findall(r"\{([^{}]*)", what):
            for item in braces.split(","):  # each item's name, not its value after a colon
                found = re.match(r"\s*([a-z_]+)\??\s*(?::|$)", item)
                if found:
                    named.add(found.group(1))
        unknown = named - known
        assert not unknown, f"docs/guide.md, {method.upper()} {path}: no such field {unknown}"
