"""An app done with is freed, with its store: a process that opens apps in turn (a
tenant reopened, the test suite's thousands) keeps none of them. Each kept app held its
store, its caches and its metrics; the suite's heap grew to six million objects, and
each of Python's full collections then stopped every thread for seconds, requests
among them (schemathesis met the request deadline)."""

from __future__ import annotations

import gc
import weakref

from fastapi.testclient import TestClient

from infra.config import load_settings
from infra.http.app import create_app
from tests.conftest import StoreFactory

# The routes of every kind: the API's, FastAPI's document, the docs pages (add_docs).
PATHS = ("/v1/health", "/metrics", "/openapi.json", "/docs", "/redoc")


def test_an_app_done_with_is_freed_with_its_store(stores: StoreFactory) -> None:
    store = stores.open()
    app = create_app(store, load_settings(database_url=store.url), background=True)
    with TestClient(app) as client:  # its lifespan starts the workers, and stops them
        assert [client.get(path).status_code for path in PATHS] == [200] * len(PATHS)
    stores.close(store)
    kept = [weakref.ref(app), weakref.ref(store)]
    del app, store, client
    gc.collect()
    assert [ref() for ref in kept] == [None, None]
