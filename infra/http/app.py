"""The HTTP API: FastAPI app factory, error mapping, limits and request logs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from domain.errors import DomainError
from infra.checkpoints.witnesses import open_witness
from infra.config import Settings
from infra.fault_log import faults
from infra.feed.relay import FeedCollector, feed_relays
from infra.http.auth import key_digests
from infra.http.contract import document
from infra.http.docs import add_docs
from infra.http.methods import HeadAsGet, allowed_methods
from infra.http.middleware import BodySizeLimit, Deadline, RequestLog
from infra.http.problems import FIELD_CODES, Problem, from_domain, from_problem, problem_response
from infra.http.responses import FastJSONResponse
from infra.http.routes import (
    audit_pages,
    bonuses,
    events,
    health,
    p2p,
    players,
    protection,
    providers,
    reports,
    round_index,
    rounds,
    significant_events,
    tables,
)
from infra.http.strict_json import BODY_PROBLEM, StrictJsonBodies
from infra.logs import get_logger
from infra.metrics import Metrics
from infra.secrets import SecretUnopened
from infra.significant import StartRecord, Throttle
from infra.store.faults import FAULT_CLASSES, NOT_KNOWN, STORE, is_store_fault
from infra.store.reach import first_line
from infra.store.seal import LogTampered, SealKeyRetired
from infra.store.store import Store
from infra.witness import WitnessWorker
from infra.workers import (
    TAMPERED,
    AbandonedRoundWorker,
    BonusExpiryWorker,
    DueChoiceWorker,
    ExclusionWorker,
    IdleRoundWorker,
    LapsedProviderRoundWorker,
    PeriodicWorker,
    ProjectorWorker,
    ReceiptPruner,
    StoreWatch,
    ThrottleWorker,
)

BODY_BYTES_MAX = 64 * 1024
PACKAGE = "casino-ledger"  # pyproject.toml's name: the document's version is its version

log = get_logger("casino.http")


def witness_worker(store: Store, settings: Settings) -> WitnessWorker:
    witness = open_witness(settings.witness)  # a file or a stream: connected at first use
    return WitnessWorker(store, witness, settings.witness_seconds, settings.witness_events)


def create_app(
    store: Store, settings: Settings, *, background: bool = True, tenant: str | None = None
) -> FastAPI:
    """The app: FastAPI's routing, the store's commands and reads, the workers (with
    `background`), and the middleware that wraps every request. `tenant`: the app is
    one tenant's of several (infra/http/tenants.py), named in its threads' log lines."""
    metrics = Metrics(store)
    store.commands.observe(metrics)
    workers: list[PeriodicWorker] = []
    # Refused authentication and failing workers, counted and recorded once an interval,
    # each record written by a thread of its own, never by the event loop.
    recorder = ThreadPoolExecutor(
        max_workers=1,
        thread_name_prefix="significant-events",
        initializer=_bound,
        initargs=(tenant,),
    )
    throttle = Throttle(
        lambda kind, details: store.app.record_significant(kind, details),
        hand_off=recorder.submit,
    )

    start = StartRecord(store.app, settings) if background else None

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        started: list[PeriodicWorker] = []
        if start is not None:
            start.record()  # or, the store down, again every second (StoreWatch)
            started = [StoreWatch(store, start), *_workers(store, settings, throttle)]
        for worker in started:
            worker.observer, worker.failures, worker.tenant = metrics, throttle, tenant
            worker.start()
        workers.extend(started)
        # What a cash-out waits for (infra/http/cash_out.py).
        api.state.witness = next((w for w in started if isinstance(w, WitnessWorker)), None)
        yield
        for worker in started:
            worker.stop()
            workers.remove(worker)
        recorder.shutdown(wait=True)  # what was handed off is written before the rest
        if api.state.retired:  # its tenant moved on (infra/http/tenants.py): not a word more
            return
        throttle.flush()
        if background:
            store.app.record_significant("stopped", {})
        for worker in started:
            if isinstance(worker, WitnessWorker):
                worker.note_last()  # After the last save (infra/witness.py)

    api = FastAPI(
        title="Casino accounting",
        version=version(PACKAGE),  # as `casino --version` says
        description="Event-sourced wallets, ledgers and game rounds. Amounts are decimal "
        "strings. Every GET route answers HEAD (its headers, no body); a 405 lists in "
        "`Allow` the methods its path takes.",
        lifespan=lifespan,
        default_response_class=FastJSONResponse,
        docs_url=None,  # served offline by add_docs
        redoc_url=None,
        # The service's metrics are its own (/metrics, Prometheus). FastAPI's native
        # OpenTelemetry otherwise asks on every request whether a provider is set.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    api.openapi = lambda: document(api)  # type: ignore[method-assign]
    api.state.store = store
    api.state.settings = settings
    api.state.metrics = metrics
    api.state.workers = workers  # what readiness looks at
    metrics.registry.register(FeedCollector(workers))  # the feed's relay among them
    api.state.start = start  # and whether the start-up event is saved
    api.state.witness = None  # set once the workers start
    keys = settings.keys()  # a tenant's of the directory: its own (infra/tenants.py)
    api.state.tenant = tenant
    api.state.retired = False
    api.state.api_keys = keys
    api.state.key_digests = key_digests(keys)
    api.state.refusals = throttle
    api.state.provider_secrets = {}  # opened once (infra/http/provider_calls.py)
    # Whether another tenant of this process has registered a provider id (rules.md 11:
    # ids are unique across the deployment); infra/http/tenants.py sets it.
    api.state.provider_elsewhere = _nowhere_else
    # FastAPI tries each route in order until one matches (about 5 microseconds a
    # route): the routers of the busiest commands come first. No two routes match one
    # path (tests/infra/http/test_routing.py), so the order changes no answer.
    api.include_router(rounds.router)
    api.include_router(providers.wallet_router)  # a provider's calls, many a second
    api.include_router(p2p.router)
    api.include_router(players.router)
    api.include_router(tables.router)
    api.include_router(protection.router)
    api.include_router(bonuses.router)
    api.include_router(providers.router)
    api.include_router(significant_events.router)
    api.include_router(reports.router)
    api.include_router(health.router)
    api.include_router(round_index.router)
    api.include_router(audit_pages.router)
    audit_pages.assets()  # read now, not in the event loop by the first page asked for
    api.include_router(events.router)
    add_docs(api)
    _add_error_handlers(api)
    # The last added runs outermost: every request is logged, refused ones included.
    api.add_middleware(HeadAsGet, routes=api.router.routes)
    api.add_middleware(StrictJsonBodies)
    api.add_middleware(BodySizeLimit, limit=BODY_BYTES_MAX)
    api.add_middleware(Deadline, seconds=settings.request_deadline_seconds)
    api.add_middleware(RequestLog, observe=metrics.request)
    return api


def _bound(tenant: str | None) -> None:
    """A thread of one tenant's app names it in its log lines (infra/http/tenants.py)."""
    if tenant is not None:
        structlog.contextvars.bind_contextvars(tenant=tenant)


def _workers(store: Store, settings: Settings, throttle: Throttle) -> list[PeriodicWorker]:
    debounce = settings.projector_debounce_ms / 1000
    inside = [ProjectorWorker(store, debounce)] if store.projector_inside else []
    return [
        *inside,
        IdleRoundWorker(store, settings.idle_timeout_seconds),
        LapsedProviderRoundWorker(store, settings.provider_round_seconds),
        AbandonedRoundWorker(store, settings.resume_window_seconds),
        DueChoiceWorker(store, settings.decision_seconds),
        ExclusionWorker(store),
        BonusExpiryWorker(store),
        ThrottleWorker(throttle),
        ReceiptPruner(store),
        witness_worker(store, settings),
        *feed_relays(store, settings.feed),
    ]


def _add_error_handlers(api: FastAPI) -> None:
    @api.exception_handler(DomainError)
    async def domain_error(_: Request, error: DomainError) -> JSONResponse:
        return from_domain(error)

    @api.exception_handler(Problem)
    async def problem(_: Request, error: Problem) -> JSONResponse:
        return from_problem(error)

    @api.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        malformed = getattr(request.state, BODY_PROBLEM, None)
        if isinstance(malformed, Problem):  # The body's own problem comes first.
            return from_problem(malformed)
        return _validation_problem(error.errors())

    @api.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        if error.status_code == 404:
            return problem_response(404, "not_found", f"no route {request.url.path[:200]}")
        if error.status_code == 405:
            allowed = ", ".join(allowed_methods(request.app.router.routes, request.scope))
            detail = f"{request.method} is not allowed here; allowed: {allowed}"
            refusal = problem_response(405, "method_not_allowed", detail)
            refusal.headers["Allow"] = allowed
            return refusal
        return problem_response(error.status_code, "invalid_request", str(error.detail))

    @api.exception_handler(SealKeyRetired)
    async def retired(_: Request, error: SealKeyRetired) -> JSONResponse:
        # A rotation to finish on this server: a configuration fault, not tampering.
        faults.failed("seal_key_retired", error)
        return problem_response(503, "seal_key_retired", str(error))

    @api.exception_handler(SecretUnopened)
    async def unopened(_: Request, error: SecretUnopened) -> JSONResponse:
        # This server's CASINO_SECRET_KEY is not the one that sealed it: a setting to fix.
        faults.failed("secret_key_mismatch", error)
        return problem_response(503, "secret_key_mismatch", str(error))

    @api.exception_handler(LogTampered)
    async def tampered(_: Request, error: LogTampered) -> JSONResponse:
        # Not our bug and not the caller's: the log changed behind the service's back.
        faults.failed(TAMPERED, error)
        return problem_response(503, "log_tampered", str(error))

    async def store_fault(_: Request, error: Exception) -> JSONResponse:
        if not is_store_fault(error):
            raise error  # a bug after all (SQLite's "no such table"): RequestLog's 500
        faults.failed(STORE, error)  # once, then a minute apart (infra/fault_log.py)
        detail = f"the store is unavailable ({first_line(error)}); the request is {NOT_KNOWN}"
        return problem_response(503, "store_unavailable", detail)

    for kind in FAULT_CLASSES:
        api.add_exception_handler(kind, store_fault)
    # Any other exception is our bug: infra/http/middleware.py (RequestLog) answers
    # 500 internal_error with the request's id, having logged it once.


NOT_AN_OBJECT = {"model_attributes_type", "dict_type", "model_type", "missing"}


def _validation_problem(errors: Any) -> JSONResponse:
    first = errors[0]
    location = [str(part) for part in first.get("loc", ())]
    named = [part for part in first.get("loc", ()) if isinstance(part, str)]
    if first.get("type") == "json_invalid":
        return problem_response(400, "malformed_json", "the body is not valid JSON")
    if location == ["body"] and first.get("type") in NOT_AN_OBJECT:
        return problem_response(422, "invalid_body", "the body must be a JSON object")
    field = named[-1] if named else ""  # a list item's error is about its list
    code = FIELD_CODES.get(field, "invalid_request")
    detail = "; ".join(
        f"{'.'.join(str(part) for part in issue['loc'][1:]) or 'body'}: {issue['msg']}"
        for issue in errors
    )
    return problem_response(422, code, detail)


def _nowhere_else(provider_id: str) -> bool:
    """With one tenant, no provider is registered anywhere else."""
    return False
