# Two set-up commands for a newcomer: `make run` and `make test`. Both install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)  ## Serve the API on the embedded SQLite store (var/casino.sqlite).
	$(BIN)/casino serve

test: lint typecheck pytest  ## Everything CI checks.

lint: $(STAMP)
	$(BIN)/ruff check domain projections infra tests benchmarks
	$(BIN)/ruff format --check domain projections infra tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)  ## Print throughput figures on both stores (PostgreSQL must be up).
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
