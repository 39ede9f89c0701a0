# Two set-up commands for a newcomer: `make run` and `make test`. Both install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The browser tests (tests/browser): playwright-core from npm drives Debian's chromium.
BROWSER_STAMP := tests/browser/node_modules/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
CHROMIUM := /usr/bin/chromium
# The witness tests start a NATS server of their own (tests/infra/checkpoints).
NATS_SERVER := /usr/sbin/nats-server

.PHONY: run test lint typecheck pytest browser-deps nats-server bench clean api-doc

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)  ## Serve the API on the embedded SQLite store (var/casino.sqlite); HOST= PORT=
	$(BIN)/casino serve --host $(HOST) --port $(PORT)

test: lint typecheck pytest  ## Everything CI checks.

lint: $(STAMP)
	$(BIN)/ruff check domain projections infra tests benchmarks
	$(BIN)/ruff format --check domain projections infra tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) browser-deps nats-server
	$(BIN)/pytest

browser-deps: $(BROWSER_STAMP) $(CHROMIUM)  ## What the auditor's page tests need.

$(BROWSER_STAMP): tests/browser/package.json tests/browser/package-lock.json
	npm ci --prefix tests/browser --ignore-scripts --no-audit --no-fund
	touch $@

# Debian's own build; no browser is ever downloaded by a test tool.
$(CHROMIUM):
	if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	$$sudo apt-get update -qq && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

nats-server: $(NATS_SERVER)  ## What the witness tests start (JetStream, a port of their own).

# Debian's build, as for chromium.
$(NATS_SERVER):
	if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	$$sudo apt-get update -qq && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server

api-doc: $(STAMP)  ## Write docs/api-reference.md again from the OpenAPI document.
	$(BIN)/python -m infra.http.api_doc > docs/api-reference.md

bench: $(STAMP)  ## Print throughput figures on both stores (PostgreSQL must be up).
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis tests/browser/node_modules
