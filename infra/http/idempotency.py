"""Idempotency-Key handling: every POST and DELETE carries one; a PUT may (api.md,
Conventions).

The key is scoped to the caller's API key; the fingerprint covers the method,
the path and the body (parsed, so spacing and key order do not matter). The
application stores the first answer in the same save as the command's events.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ParamSpec, TypeVar
from urllib.parse import parse_qsl, urlencode

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from domain.commands import BoundCommand
from domain.outcome import Outcome, Receipt
from infra.http.auth import COMMAND, OPERATOR, Allow, Principal
from infra.http.problems import Problem
from infra.http.responses import FastJSONResponse
from infra.http.strict_json import PARSED_BODY

T = TypeVar("T")
P = ParamSpec("P")
KEY_LENGTH_MAX = 128
# What a key may be, enforced here and published in the OpenAPI document: 1-128
# characters each printable when the header's bytes are read as Latin-1 (so "é" sent
# as UTF-8 passes, and a C1 control byte of "ключ" does not). One definition for both.
KEY_PATTERN = re.compile(rf"^[ -~\u00a1-\u00ac\u00ae-\u00ff]{{1,{KEY_LENGTH_MAX}}}$")
# A PUT is idempotent by itself (its body is the state it sets), so it needs no key.
KEY_OPTIONAL_METHODS = frozenset({"PUT"})
# Every command's answer names the log position that includes it; a read given that
# position as `min_position` sees the command's effects (read-your-writes).
POSITION_HEADER = "Casino-Position"
LOGGED_BODY_IDS = ("player_id",)


@dataclass(frozen=True)
class Command:
    """What a command route needs to make its call idempotent and shape its answer."""

    scoped_key: str
    fingerprint: str
    # The refusal of the key used for another request (None: idempotency_key_reused).
    reused: Callable[[], Exception] | None = None
    sealed: tuple[str, ...] = ()  # the answer's credentials, kept sealed in the receipt

    def receipt(self, body: Callable[[T], dict[str, Any]]) -> Receipt[T]:
        """The receipt of this request: its key, and how to shape the answer's body."""
        return Receipt(self.scoped_key, self.fingerprint, body, self.reused, self.sealed)

    def sealing(self, *fields: str) -> Command:
        """This command, its answer's `fields` kept sealed in its receipt."""
        return replace(self, sealed=fields)

    async def run(
        self,
        bound: BoundCommand[Any, P, T],
        body: Callable[[T], dict[str, Any]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> Outcome[T]:
        """Run the command once per key, to its end, in a worker thread: the application's
        seam (`app.commands`, infra/commands/seam.py: `CommandSeam.run`) calls its method. A caller
        that goes away cancels this coroutine, never the command: anyio waits for a
        thread it runs, so a command that started lands once or not at all."""
        commands, receipt = bound.app.commands, self.receipt(body)
        return await run_in_threadpool(
            commands.run, bound.method, receipt, bound.name, args, kwargs
        )

    @staticmethod
    def respond(outcome: Outcome[Any], status: int) -> FastJSONResponse:
        """The answer: the body the receipt remembers, with the route's own status (a
        replay answers exactly as the first time did)."""
        assert outcome.answer is not None, "command routes always pass a receipt"
        headers = {POSITION_HEADER: str(outcome.position)}
        if outcome.replayed:
            headers["Idempotent-Replayed"] = "true"
        return FastJSONResponse(outcome.answer, status, headers=headers)


async def _command(request: Request, principal: Principal) -> Command:
    key = request.headers.get("idempotency-key")
    if key is None and request.method in KEY_OPTIONAL_METHODS:
        # A receipt all the same, under a key no one else holds: after a lost
        # connection it still tells whether the save landed.
        key = f"unkeyed-put-{uuid.uuid4().hex}"
    if key is None:
        raise Problem(400, "idempotency_key_missing", "send an Idempotency-Key header")
    if KEY_PATTERN.fullmatch(key) is None:
        raise Problem(
            400,
            "invalid_idempotency_key",
            f"Idempotency-Key must be 1-{KEY_LENGTH_MAX} printable characters (its bytes read "
            "as Latin-1: send ASCII)",
        )
    body = await request.body()
    parsed = _parsed(request, body)
    _note_ids_for_the_log(request, parsed)
    return Command(
        scoped_key=f"{principal.key_digest}:{key}",
        fingerprint=_fingerprint(request.method, _target(request), body, parsed),
    )


_UNREADABLE = object()


def _parsed(request: Request, body: bytes) -> Any:
    """The body's JSON value: as StrictJsonBodies parsed it already, else parsed here
    (a body not declared JSON); _UNREADABLE when it is not JSON at all."""
    parsed = request.scope.get("state", {}).get(PARSED_BODY, _UNREADABLE)
    if parsed is not _UNREADABLE or not body:  # no body (a deal): nothing to parse
        return parsed
    try:
        return json.loads(body)
    except ValueError:
        return _UNREADABLE


class CommandOf:
    """A command route's one dependency: the caller admitted by `allowed`, then the
    command its Idempotency-Key names. One dependency, not one depending on another:
    FastAPI resolves each level at a cost (with the metrics' cached children, a
    deposit's server CPU went from 2.5 to 2.1 ms in `make bench`'s load section).
    The OpenAPI document reads `roles` as it reads an Allow's."""

    def __init__(self, allowed: Allow) -> None:
        self.allowed = allowed
        self.roles = allowed.roles

    async def __call__(self, request: Request) -> Command:
        return await _command(request, await self.allowed(request))


service_command = CommandOf(COMMAND)
operator_command = CommandOf(OPERATOR)


def _note_ids_for_the_log(request: Request, parsed: Any) -> None:
    """Ids named in the body (a player sitting down, say) go into the request's log line."""
    if isinstance(parsed, dict):
        request.state.log_ids = {
            name: parsed[name] for name in LOGGED_BODY_IDS if isinstance(parsed.get(name), str)
        }


def _target(request: Request) -> str:
    """The path, with the query when there is one (`?player_id=` names whose stake a
    DELETE takes back), decoded and sorted, so a retry spelling the same query
    another way matches. Without a query it is the path alone, as receipts stored
    before queries counted were fingerprinted."""
    pairs = sorted(parse_qsl(request.url.query, keep_blank_values=True))
    return f"{request.url.path}?{urlencode(pairs)}" if pairs else request.url.path


def fingerprint_of(request: Request, body: bytes) -> str:
    """The fingerprint of a request whose body is read already (a provider's call)."""
    return _fingerprint(request.method, _target(request), body, _parsed(request, body))


def _fingerprint(method: str, path: str, body: bytes, parsed: Any) -> str:
    if parsed is _UNREADABLE:
        canonical = body.decode("utf-8", "replace")  # Refused later as malformed anyway.
    else:
        canonical = json.dumps(parsed, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()
