"""Request bodies parsed strictly, and refused only once the caller is known.

FastAPI parses a JSON body before it runs any dependency, so a malformed body
used to be answered before authentication, with a plain `{"detail": ...}`, and
Python's parser lets the last of two equal keys win (`{"amount": "1.00",
"amount": "50.00"}` deposited 50.00). Here every JSON body is parsed first,
strictly: UTF-8 only, no duplicate key, no NaN or Infinity, at most
JSON_DEPTH_MAX levels deep. A body that fails is replaced by `{}` and its
problem kept in the request's state; `raise_body_problem` raises it where the
route's role check has passed (`infra/http/auth.py: allow`).
"""

from __future__ import annotations

import email.message
import functools
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from infra.http.problems import Problem

JSON_DEPTH_MAX = 16
BODY_PROBLEM = "body_problem"
PARSED_BODY = "parsed_body"  # the body's value, parsed here, for whoever needs it next
# The bytes of a body found malformed, which FastAPI is handed `{}` for: what a
# provider's signature covers (infra/http/provider_calls.py).
RAW_BODY = "raw_body"
PLACEHOLDER = b"{}"


class DuplicateKey(ValueError):
    pass


class StrictJsonBodies:
    """Parses each JSON request body once, strictly, before FastAPI does."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _declares_json(scope):
            await self.app(scope, receive, send)
            return
        messages, body = await _read_whole(receive)
        if messages[-1]["type"] != "http.request" or not body:
            await self.app(scope, replay(messages, receive), send)  # disconnected, or empty
            return
        try:
            scope.setdefault("state", {})[PARSED_BODY] = parse_strictly(body)
        except Problem as problem:
            scope["state"][BODY_PROBLEM] = problem
            scope["state"][RAW_BODY] = body
            messages = [{"type": "http.request", "body": PLACEHOLDER, "more_body": False}]
        await self.app(scope, replay(messages, receive), send)


def parse_strictly(body: bytes) -> Any:
    """The body's JSON value, or a Problem: 400 malformed_json, 422 invalid_body."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Problem(400, "malformed_json", "the body is not UTF-8") from None
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_constant=_refuse_constant)
    except DuplicateKey as error:
        raise Problem(422, "invalid_body", str(error)) from None
    except RecursionError:
        raise Problem(422, "invalid_body", _too_deep()) from None
    except ValueError:
        raise Problem(400, "malformed_json", "the body is not valid JSON") from None
    if _depth(value) > JSON_DEPTH_MAX:
        raise Problem(422, "invalid_body", _too_deep())
    return value


def raise_body_problem(scope: Scope) -> None:
    """Raise the problem the body was found to have, if any (after authentication)."""
    problem = scope.get("state", {}).get(BODY_PROBLEM)
    if isinstance(problem, Problem):
        raise problem


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKey(f"the key {key[:40]!r} appears more than once in one object")
        found[key] = value
    return found


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _too_deep() -> str:
    return f"the body is nested more than {JSON_DEPTH_MAX} levels deep"


def _depth(value: Any) -> int:
    """How deeply lists and objects nest (a scalar is 0), without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        current, depth = pending.pop()
        if isinstance(current, dict):
            children = list(current.values())
        elif isinstance(current, list):
            children = current
        else:
            continue
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children)
    return deepest


def _declares_json(scope: Scope) -> bool:
    """As FastAPI decides whether to parse a body: application/json or +json."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return _is_json(value)
    return False


@functools.lru_cache(maxsize=64)  # Clients send few distinct content types: parse each once.
def _is_json(content_type: bytes) -> bool:
    message = email.message.Message()
    message["content-type"] = content_type.decode("latin-1")
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


async def _read_whole(receive: Receive) -> tuple[list[Message], bytes]:
    """Every message of the body (BodySizeLimit, outside, keeps it small)."""
    messages, chunks = [], []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return messages, b"".join(chunks)


def replay(messages: list[Message], receive: Receive) -> Receive:
    queue = list(messages)

    async def replayed() -> Message:
        if queue:
            return queue.pop(0)
        return await receive()

    return replayed
