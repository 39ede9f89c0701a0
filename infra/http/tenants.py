"""One process serving several tenants (rules.md 11): a request's key chooses its app.

Each tenant has an app of its own (infra/http/app.py: `create_app`), over a store of
its own, with its own keys, caches, metrics, workers, witness and group commit: the
routes, `app_of(request)` and every read and command work as with one tenant, and
nothing one tenant's app holds is reachable from another's. `TenantApps` only chooses:

- a request whose bearer key is one of a tenant's goes to that tenant's app, with
  `tenant` bound in every log line made while it is answered;
- readiness (`/v1/health/ready`) and `/metrics` answer for the whole process:
  readiness is 200 while at least one tenant can save, its checks named
  `TENANT/CHECK`; the metrics are every tenant's, labelled `tenant`;
- a provider's call (`/v1/wallet/{provider_id}/...`, signed, no key) goes to the
  app of the tenant that registered that provider (ids are unique across the
  deployment: a registration of an id another tenant holds is 409 `provider_exists`);
- any other request (no key, an unknown key, a page or document that needs none)
  goes to the first tenant's app, which answers it as it would any caller without
  a known key (401, or the page);
- a tenant fenced while it moves (`casino tenants move`) answers its commands 503
  `tenant_moving` with `Retry-After` (infra/tenant_move.py); its reads go on;
- a tenant whose store could not be opened at start-up (its database down, say)
  does not stop the others: its requests are answered 503 `store_unavailable` with
  `Retry-After`, readiness names it, and it is opened again every
  `TENANT_RETRY_SECONDS` until it opens, then served like the rest.

The key is looked up by its SHA-256 digest, so the lookup's time tells nothing of
the keys configured.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import structlog
from fastapi import FastAPI
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from domain.errors import DomainError
from infra.config import Settings
from infra.http.auth import KEY_LENGTH_MAX
from infra.http.problems import problem_response
from infra.http.responses import FastJSONResponse
from infra.http.routes.health import CRITICAL, NO_ANSWER, Check, readiness, within_budget
from infra.logs import get_logger
from infra.metrics import CONTENT_TYPE, tenants_exposition
from infra.store.faults import StoreNotOpened, is_store_fault
from infra.store.reach import first_line
from infra.tenant_move import DIRECTORY_POLL_SECONDS
from infra.tenants import Tenant

SAFE_METHODS = frozenset(("GET", "HEAD", "OPTIONS"))
WALLET_CALLS = "/v1/wallet/"  # a provider's calls: /v1/wallet/{provider_id}/...
PROVIDERS_KEPT_MAX = 10_000  # providers whose tenant is kept, by id (and ids unknown)
UNKNOWN_KEPT_SECONDS = 1.0
FENCE_SECONDS_MAX = 30.0  # a fence never outlives this, whoever forgot to lift it
TENANT_RETRY_SECONDS = 5.0  # a tenant not opened at start-up is tried again this often
log = get_logger("casino.tenants")


class DuplicateKey(Exception):
    """An API key configured for two tenants."""


Opener = Callable[[str, Tenant], FastAPI]  # a tenant's app over its store, opened


class TenantApps:
    """`apps`: each tenant's. With `directory` (CASINO_TENANTS as a file), `reload`
    (its tenants, read again) and `opener`, the process watches the directory: a
    tenant marked `fenced` is fenced, and one whose place changed is opened there
    (its app anew), its old app retired without a word more to its old store, and
    the fence lifted (infra/tenant_move.py)."""

    def __init__(
        self,
        apps: dict[str, FastAPI],
        *,
        waiting: dict[str, tuple[Tenant, str]] | None = None,
        directory: Path | None = None,
        reload: Callable[[], dict[str, Tenant]] | None = None,
        opener: Opener | None = None,
    ) -> None:
        """`waiting`: tenants whose store could not be opened yet, each with why; they
        are opened again in the background (with `opener`) until they open."""
        self.waiting = dict(waiting or {})
        if not apps and not self.waiting:
            raise ValueError("no tenant")
        self.apps: dict[str, FastAPI] = {}
        self.front: FastAPI | None = None
        self.directory, self.reload, self.opener = directory, reload, opener
        self._places: dict[str, tuple[str, str]] = {}
        self._stacks: dict[str, AsyncExitStack] = {}
        self._switching: set[str] = set()  # tenants being opened at their new place
        self._by_digest: dict[bytes, str] = {}
        keys = {name: list(app.state.api_keys) for name, app in apps.items()}
        keys |= {name: list(tenant.settings.keys()) for name, (tenant, _) in self.waiting.items()}
        for name, listed in keys.items():
            for key in listed:
                other = self._by_digest.setdefault(_digest(key), name)
                if other != name:
                    raise DuplicateKey(f"tenants {other} and {name} share an API key")
        self._fences: dict[str, float] = {}  # tenant -> when the fence lapses (monotonic)
        # A provider never changes tenant: where one was found, it is found again; an id
        # no tenant has is not looked for again for a second (calls carry no key, so
        # anyone can send them).
        self._providers: dict[str, str] = {}
        self._unknown: dict[str, float] = {}
        for name, app in apps.items():
            self._serve(name, app)

    def _serve(self, name: str, app: FastAPI) -> None:
        """The tenant's requests go to `app` from now on (at start, once it opened after
        waiting, or reopened at its new place): it asks the other tenants whether a
        provider id is theirs, and answers keyless requests if it is the first open."""
        app.state.provider_elsewhere = self._elsewhere(name)
        self._places[name] = _place(app.state.settings)
        old = self.apps.get(name)
        self.apps[name] = app
        if self.front is None or self.front is old:
            self.front = app

    def _elsewhere(self, tenant: str) -> Callable[[str], bool]:
        def provider_elsewhere(provider_id: str) -> bool:
            found = self.provider_tenant(provider_id)
            self._unknown.pop(provider_id, None)  # it may be registered now
            return found is not None and found != tenant

        return provider_elsewhere

    def provider_tenant(self, provider_id: str) -> str | None:
        """The tenant that registered the provider, if any (a read of each tenant's store
        until found; run it in a thread)."""
        if (known := self._providers.get(provider_id)) is not None:
            return known
        if time.monotonic() - self._unknown.get(provider_id, -math.inf) < UNKNOWN_KEPT_SECONDS:
            return None
        failed: Exception | None = None
        if self.waiting:  # a tenant not open may hold it: not known to be nobody's
            failed = StoreNotOpened(f"tenants not open yet: {', '.join(sorted(self.waiting))}")
        for name, app in list(self.apps.items()):
            try:
                app.state.store.app.provider(provider_id)
            except DomainError:
                continue
            except Exception as error:  # its store down or reopening: the others go on
                failed = error
                continue
            _keep(self._providers, provider_id, name)
            return name
        if failed is not None:
            raise failed  # not known to be nobody's: the caller answers 503, not 401
        _keep(self._unknown, provider_id, time.monotonic())
        return None

    def tenant_of(self, scope: Scope) -> str | None:
        header = Headers(scope=scope).get("authorization", "")
        scheme, _, key = header.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key or len(key) > KEY_LENGTH_MAX:
            return None
        return self._by_digest.get(_digest(key))

    def fence(self, tenant: str, seconds: float) -> None:
        """Refuse the tenant's commands (503 tenant_moving) until `lift` or `seconds`."""
        self._fences[tenant] = time.monotonic() + min(seconds, FENCE_SECONDS_MAX)

    def lift(self, tenant: str) -> None:
        self._fences.pop(tenant, None)

    def _fenced_for(self, tenant: str) -> float:
        until = self._fences.get(tenant)
        left = 0.0 if until is None else until - time.monotonic()
        if until is not None and left <= 0:
            self._fences.pop(tenant, None)
        return max(left, 0.0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        if scope["type"] == "http" and path == "/v1/health/ready":
            await (await self._ready())(scope, receive, send)
            return
        if scope["type"] == "http" and path == "/metrics":
            await (await run_in_threadpool(self._metrics, dict(self.apps)))(scope, receive, send)
            return
        tenant = self.tenant_of(scope) if scope["type"] == "http" else None
        if tenant is None and scope["type"] == "http" and path.startswith(WALLET_CALLS):
            provider_id = path[len(WALLET_CALLS) :].partition("/")[0]
            try:
                tenant = await run_in_threadpool(self.provider_tenant, provider_id)
            except Exception as error:
                log.warning("provider_lookup_failed", error=type(error).__name__)
                refusal = problem_response(
                    503, "store_unavailable",
                    "a tenant's store could not say whether it holds this provider; retry",
                )  # fmt: skip
                refusal.headers["Retry-After"] = "1"
                await refusal(scope, receive, send)
                return
        if tenant is None and self.front is not None:
            await self.front(scope, receive, send)
            return
        if tenant is None or tenant in self.waiting:
            await self._not_open(tenant)(scope, receive, send)
            return
        with structlog.contextvars.bound_contextvars(tenant=tenant):
            fenced = self._fenced_for(tenant)
            safe = scope["method"] in SAFE_METHODS and tenant not in self._switching
            if fenced and not safe:
                refusal = problem_response(
                    503, "tenant_moving",
                    f"the tenant {tenant} is moving to another database; the request was not "
                    "taken: retry it with the same Idempotency-Key",
                )  # fmt: skip
                refusal.headers["Retry-After"] = str(max(1, math.ceil(fenced)))
                await refusal(scope, receive, send)
                return
            await self.apps[tenant](scope, receive, send)

    def _not_open(self, tenant: str | None) -> Response:
        """The answer for a tenant whose store is not open yet (or, with none open at
        all, for a request that names no tenant)."""
        why = "no tenant's store is open yet" if tenant is None else (
            f"the tenant's store could not be opened yet ({self.waiting[tenant][1]}); "
            "it is tried again every few seconds"
        )  # fmt: skip
        refusal = problem_response(503, "store_unavailable", f"{why}; nothing was done, retry")
        refusal.headers["Retry-After"] = str(math.ceil(TENANT_RETRY_SECONDS))
        return refusal

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Every tenant's app started (its workers, its start-up event) and stopped."""
        await receive()  # lifespan.startup
        try:
            for name, app in self.apps.items():
                await self._start(name, app)
        except BaseException as error:
            await self._stop_all()
            await send({"type": "lifespan.startup.failed", "message": repr(error)[:500]})
            return
        tasks = []
        if self.directory is not None and self.reload and self.opener:
            tasks.append(asyncio.create_task(self._watch(self.directory)))
        if self.waiting and self.opener:
            tasks.append(asyncio.create_task(self._open_waiting()))
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        for task in tasks:
            task.cancel()
        await self._stop_all()
        await send({"type": "lifespan.shutdown.complete"})

    async def _open_waiting(self) -> None:
        """Try each tenant not open yet again, every TENANT_RETRY_SECONDS, until all are."""
        assert self.opener is not None
        while self.waiting:
            await asyncio.sleep(TENANT_RETRY_SECONDS)
            for name, (tenant, _) in list(self.waiting.items()):
                with structlog.contextvars.bound_contextvars(tenant=name):
                    try:
                        app = await self._open(name, tenant)
                    except Exception as error:  # a fault, or worse: it stays refused
                        if name in self.waiting:
                            self.waiting[name] = (self.waiting[name][0], _why(error))
                        level = log.warning if is_store_fault(error) else log.error
                        level("tenant_not_opened", error=_why(error), detail=first_line(error))
                        continue
                    latest = self.waiting.get(name, (tenant, ""))[0]
                    self._opened(name, app)
                    log.info("tenant_opened", store=tenant.location)
                    # Its directory entry as it stands now: moved or fenced meanwhile.
                    await self._follow(name, latest)

    async def _open(self, name: str, tenant: Tenant) -> FastAPI:
        """The tenant's app, opened and started; nothing left open if it fails."""
        assert self.opener is not None
        app = await run_in_threadpool(self.opener, name, tenant)
        try:
            await self._start(name, app)
        except BaseException:
            await run_in_threadpool(app.state.store.close)
            raise
        return app

    def _opened(self, name: str, app: FastAPI) -> None:
        """A tenant that waited, served from now on."""
        self._serve(name, app)
        self.waiting.pop(name, None)
        self._unknown.clear()  # a provider id not found before may be this tenant's

    async def _start(self, name: str, app: FastAPI) -> None:
        stack = AsyncExitStack()
        with structlog.contextvars.bound_contextvars(tenant=name):
            await stack.enter_async_context(app.router.lifespan_context(app))
        self._stacks[name] = stack

    async def _stop_all(self) -> None:
        for name in list(self._stacks):
            with structlog.contextvars.bound_contextvars(tenant=name):
                await self._stacks.pop(name).aclose()

    async def _watch(self, directory: Path) -> None:
        """Poll the directory file; act on what changed (a fence, a tenant's place)."""
        seen = None
        while True:
            await asyncio.sleep(DIRECTORY_POLL_SECONDS)
            try:
                stamp = os.stat(directory).st_mtime_ns
                if stamp == seen:
                    continue
                assert self.reload is not None
                tenants = await run_in_threadpool(self.reload)
                seen = stamp
            except Exception as error:  # half written, or wrong: the last one read stands
                log.warning("tenant_directory_unreadable", error=repr(error)[:300])
                continue
            for name, tenant in tenants.items():
                if name in self.apps:
                    await self._follow(name, tenant)
                elif name in self.waiting:  # opened, when it opens, where it is now
                    self.waiting[name] = (tenant, self.waiting[name][1])

    async def _follow(self, name: str, tenant: Tenant) -> None:
        place = _place(tenant.settings)
        if place != self._places[name]:
            self._switching.add(name)  # every request refused until it is open there
            self.fence(name, FENCE_SECONDS_MAX)
            try:
                await self._reopen(name, tenant)
            except Exception as error:  # still refused: the operator's to see
                log.error("tenant_not_reopened", tenant=name, error=repr(error)[:300])
                return
            self._switching.discard(name)
        if tenant.fenced:
            self.fence(name, FENCE_SECONDS_MAX)
        else:
            self.lift(name)

    async def _reopen(self, name: str, tenant: Tenant) -> None:
        """The tenant's old app retired first (its workers stopped, nothing more written
        to its store: no `stopped` event, no last checkpoint, the witness following the
        log that goes on), then its app anew at the new place."""
        assert self.opener is not None
        old = self.apps[name]
        old.state.retired = True
        with structlog.contextvars.bound_contextvars(tenant=name):
            await self._stacks.pop(name).aclose()
            await run_in_threadpool(old.state.store.close)
            self._serve(name, await self._open(name, tenant))
            log.info("tenant_moved", store=tenant.location)

    async def _ready(self) -> FastJSONResponse:
        """200 while at least one tenant can save; each tenant's checks, named."""
        apps = dict(self.apps)  # a tenant opened meanwhile is listed next time
        answers = await asyncio.gather(
            *(self._tenant_checks(name, app) for name, app in apps.items())
        )
        listed: list[dict[str, Any]] = []
        serving = []
        for name, checks in zip(apps, answers, strict=True):
            listed += [{"name": f"{name}/{c.name}", "ok": c.ok, "detail": c.detail} for c in checks]
            if not any(not c.ok and c.name in CRITICAL for c in checks):
                serving.append(name)
        for name, (_, why) in self.waiting.items():
            listed.append({"name": f"{name}/store", "ok": False, "detail": f"not opened: {why}"})
        failing = [c for c in listed if not c["ok"]]
        if not serving:
            detail = "; ".join(f"{c['name']}: {c['detail']}" for c in failing if _critical(c))
            return problem_response(503, "not_ready", detail, checks=listed)
        status = "degraded" if failing else "ready"
        return FastJSONResponse({"status": status, "checks": listed})

    @staticmethod
    async def _tenant_checks(name: str, app: FastAPI) -> list[Check]:
        try:
            checks: list[Check] = await within_budget(_readiness, name, app)
        except TimeoutError:
            checks = [Check("store", False, NO_ANSWER)]
        return checks

    def _metrics(self, apps: dict[str, FastAPI]) -> Response:
        """Every tenant's metrics (`apps` copied on the event loop, where a tenant that
        opens is added, not in this thread)."""
        registries = {name: app.state.metrics.registry for name, app in apps.items()}
        return Response(tenants_exposition(registries), media_type=CONTENT_TYPE)


def _place(settings: Settings) -> tuple[str, str]:
    return settings.database_url, settings.postgres_schema


def _readiness(tenant: str, app: FastAPI) -> list[Check]:
    with structlog.contextvars.bound_contextvars(tenant=tenant):  # a thread of its own
        return readiness(app.state.store, app.state.workers, app.state.start)


def _critical(check: dict[str, Any]) -> bool:
    return str(check["name"]).rsplit("/", 1)[-1] in CRITICAL


def _why(error: BaseException) -> str:
    """An error's class alone, for readiness and a refusal, which anyone may read: its
    message names hosts and ports (the log line has it)."""
    return type(error).__name__


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def _keep(kept: dict[str, Any], key: str, value: Any) -> None:
    if len(kept) >= PROVIDERS_KEPT_MAX:
        kept.clear()
    kept[key] = value
