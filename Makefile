# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-test

.PHONY: demo test lint typecheck imports pytest bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# One install (with the test extra) serves both the app and the checks.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/borrowed-keys $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check core demo tests scenarios bench
	$(BIN)/ruff format --check core demo tests scenarios bench

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

pytest: $(STAMP)
	$(BIN)/pytest -n 2 -p no:cacheprovider

test: lint typecheck imports pytest

# The bench extra adds procrastinate, which the PostgreSQL section measures against.
$(VENV)/.installed-bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
