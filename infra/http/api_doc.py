"""docs/api-reference.md, written from the OpenAPI document so that the two cannot drift:
`make api-doc` writes it, and a test fails when the file differs from what this
writes (tests/infra/http/test_api_doc.py).

    python -m infra.http.api_doc > docs/api-reference.md
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HEADER = """# The HTTP API, route by route

Written from the OpenAPI document (`/openapi.json`) by `make api-doc`; do not edit
by hand. [api.md](api.md) is the contract in prose (conventions, rules, what is
planned); /docs and /redoc browse the same document.

Every refusal is `application/problem+json`: `{type, title, status, detail, code}`
plus facts where useful; the codes each status can carry are listed per route.
Every answer carries `X-Request-ID`; every command's success carries
`Casino-Position` (and `Idempotent-Replayed: true` when replayed).
"""


def write(document: dict[str, Any]) -> str:
    out = [HEADER, "## Routes\n"]
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            out.append(_operation(path, method, operation))
    out.append("## Answers and bodies\n")
    out.append("A field marked `| null` is always present and may be null.\n")
    for name, schema in sorted(document["components"]["schemas"].items()):
        out.append(_schema(name, schema))
    return "\n".join(out)


def _operation(path: str, method: str, operation: dict[str, Any]) -> str:
    roles = [role for entry in operation.get("security", []) for role in entry]
    lines = [f"### `{method.upper()} {path}`\n"]
    summary = (operation.get("description") or operation.get("summary", "")).split("\n\n")[0]
    lines.append(" ".join(summary.split()) + "\n")
    lines.append(f"- roles: {', '.join(roles) if roles else 'none (no key)'}")
    parameters = [p for p in operation.get("parameters", []) if p["name"] != "X-Request-ID"]
    if parameters:
        lines.append("- parameters: " + ", ".join(_parameter(p) for p in parameters))
    body = operation.get("requestBody")
    if body is not None:
        schema = next(iter(body["content"].values()))["schema"]
        optional = "" if body.get("required") else " (optional)"
        lines.append(f"- body: {_type(schema)}{optional}")
    for status, answer in operation["responses"].items():
        lines.append(f"- {status}: {_answer(answer)}")
    return "\n".join(lines) + "\n"


def _parameter(parameter: dict[str, Any]) -> str:
    where = parameter["in"]
    required = "" if parameter.get("required") else "?"
    return f"`{parameter['name']}{required}` ({where}, {_type(parameter['schema'])})"


def _answer(answer: dict[str, Any]) -> str:
    content = answer.get("content", {})
    if "application/problem+json" in content:
        schema = content["application/problem+json"]["schema"]
        return "problem: " + ", ".join(f"`{c}`" for c in schema["properties"]["code"]["enum"])
    if not content:
        return str(answer.get("description", ""))
    media_type, described = next(iter(content.items()))
    return f"{_type(described['schema'])} ({media_type})"


def _schema(name: str, schema: dict[str, Any]) -> str:
    lines = [f"### {name}\n"]
    if schema.get("description"):
        lines.append(" ".join(schema["description"].split()) + "\n")
    properties = schema.get("properties")
    if properties is None:
        lines.append(f"{_type(schema)}\n")
        return "\n".join(lines)
    required = set(schema.get("required", []))
    lines.append("| field | type | |")
    lines.append("|---|---|---|")
    for field, described in properties.items():
        note = " ".join((described.get("description") or "").split())
        optional = "" if field in required else "optional; "
        lines.append(f"| `{field}` | {_type(described)} | {optional}{note} |")
    return "\n".join(lines) + "\n"


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for combined in ("anyOf", "oneOf"):
        if combined in schema:
            return " \\| ".join(_type(option) for option in schema[combined])
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"map of {_type(schema['additionalProperties'])}"
    return str(kind)


def current_document() -> dict[str, Any]:
    """The document of the app as it is, made on a throwaway store."""
    from infra.config import load_settings
    from infra.http.app import create_app
    from infra.store.store import open_store

    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'casino.sqlite'}")
        try:
            return create_app(store, load_settings(), background=False).openapi()
        finally:
            store.close()


if __name__ == "__main__":
    sys.stdout.write(write(current_document()))
