# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-test

.PHONY: demo test test-min min-venv check lint typecheck imports pytest bench preview clean generated

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
	$(BIN)/ruff check core demo tests scenarios bench devtools
	$(BIN)/ruff format --check core demo tests scenarios bench devtools

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# Four test processes on two cores: an app test spends about half its time in Pilot's waits
# for the app to go idle (each key press sleeps at least twice 20 ms), and a real-process
# test in waiting on its workers, so two more processes fill the cores those waits leave
# (on 2 cores: 540 s with two, 390 s with four; six are no faster). worksteal: a process that
# runs out takes another's queued tests, so the run does not end on one core.
XDIST := -n 4 --dist worksteal

# Textual's animations (a tab's sliding underline, about twenty paints a switch) jump to their
# end in the tests: a test reads the screen once they have finished, which is the same screen
# either way, and at 200x60 the paints between were a fifth of an app test's time. The
# environment variable is Textual's public switch; the app itself (`make demo`) still slides.
# And the tests keep compiled modules (in the __pycache__ folders git ignores) even where the
# shell says not to (PYTHONDONTWRITEBYTECODE): without them each of the four test processes
# compiled and rewrote every test module again (collecting took 15 s of processor time, 6
# with them), and each worker, CLI and agent process a test starts compiled the project anew.
TEST_ENV := TEXTUAL_ANIMATIONS=none PYTHONDONTWRITEBYTECODE=

pytest: $(STAMP)
	$(TEST_ENV) $(BIN)/pytest $(XDIST) -p no:cacheprovider

test: lint typecheck imports pytest

# The loop to run while working (under 90 s on 2 cores): the same ruff, mypy and import-linter,
# and the tests of the parts below the app (engine, sim, scenarios, search: no Textual, no
# PostgreSQL server, no real clock), each test function once per backend and language
# (`--one-case-each`), less the `deep` sweeps of every mode's whole world and the long
# hypothesis runs. `make test` runs everything, every case, the app's tests included.
CHECK_TESTS := tests/engine tests/sim tests/scenarios tests/search tests/test_parts.py tests/test_import_graph.py

check: lint typecheck imports
	$(TEST_ENV) $(BIN)/pytest $(XDIST) -p no:cacheprovider $(CHECK_TESTS) --one-case-each \
		-m "not postgresql and not real_clock and not deep"

# The same tests on the lowest versions pyproject.toml declares, pinned exactly, in a venv
# of their own (the newest ones are `make test`'s). Run by CI after `make test`. Every test
# function runs, once per backend and language (`--one-case-each`): every code path meets
# the lowest libraries, and the whole grid of cases (every size, mode, scenario) runs on
# the newest in `make test`. Left to `make test`: the `slow` tests (worker processes on the
# wall clock), which check timing between processes, not the libraries; the `deep` sweeps,
# which search every mode's world again; and the `snapshot` tests, which compare the screen
# cell for cell with SVGs made on the newest Textual (the same screens are asserted on by
# the app's other tests here).
MIN_VENV  := .venv-min
MIN_STAMP := $(MIN_VENV)/.installed-min

$(MIN_STAMP): pyproject.toml .ci/lowest_versions.py
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install -q --upgrade pip
	$(MIN_VENV)/bin/python .ci/lowest_versions.py > $(MIN_VENV)/lowest.txt
	$(MIN_VENV)/bin/python -m pip install -q -c $(MIN_VENV)/lowest.txt -e '.[test]'
	touch $(MIN_STAMP)

# The lowest-versions venv alone: CI builds it while `make test` runs.
min-venv: $(MIN_STAMP)

test-min: $(MIN_STAMP)
	@echo "lowest declared versions: $$(tr '\n' ' ' < $(MIN_VENV)/lowest.txt)"
	$(TEST_ENV) $(MIN_VENV)/bin/pytest $(XDIST) -p no:cacheprovider --one-case-each \
		-m "not slow and not snapshot and not deep"

# The bench extra adds pgqueuer and procrastinate, which the PostgreSQL section measures
# against. `make bench ARGS=--quick` runs the smaller points, `make bench ARGS="tui sim"` those
# sections only; `soak` alone takes 40 minutes (20 for the app, 20 for the fleet app), and
# `make bench ARGS="soak --quick"` two each. Every run writes its figures to bench/results/ and then regenerates
# docs/figures.md from the newest result of each figure.
$(VENV)/.installed-bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python -m bench $(ARGS)

# The preview of scenario 13 that docs/portfolio.md shows: the frames of its exported page
# as an animated GIF. The page itself is written to borrowed-keys-out/13_portfolio_demo/.
PREVIEW_GIF := docs/screenshots/portfolio-13.gif

preview: $(STAMP)
	$(BIN)/borrowed-keys export 13_portfolio_demo --lang en --preview $(PREVIEW_GIF)

# What is made ahead of time from the code and the bundled scenarios, written again after a
# change to a statement, a table or a bundled scenario (a test fails until it is): the lease's
# SQL as a person reads it, the statements' text a run reads, the scenarios parsed.
generated: $(STAMP)
	$(BIN)/python -m core.engine.lease_sql
	$(BIN)/python -m core.engine.precompile
	$(BIN)/python -m core.scenarios.precompiled

clean:
	rm -rf $(VENV) $(MIN_VENV) .pytest_cache .mypy_cache .ruff_cache
