"""A command imports what it runs and no more: `--help` and `list` load no database layer,
no scenario schema and no app, nor the event loop, the engine, the simulation or a worker;
`check` no database layer; `play` no app, and on SQLite nothing of PostgreSQL. Each is run
in a fresh interpreter and its loaded modules looked at (what is loaded, not how long it
takes)."""

import json
import subprocess
import sys

import pytest

HEAVY = ("sqlalchemy", "sqlmodel", "pydantic", "textual", "psycopg")
# What `--help` and `list` do without too, each tens of milliseconds of a start (the event
# loop, the dataclass machinery, importlib.resources with its temporary files), or what
# pulls those in: the engine past its modes, the simulation, the worker, the fleet's run.
LIGHT_WITHOUT = (
    "asyncio",
    "dataclasses",
    "importlib.resources",
    "core.engine.config",
    "core.sim",
    "core.tools.realworker",
    "core.fleet.command",
)

# Runs the command line in-process with its output dropped, then prints the heavy packages
# that were loaded.
PROBE = """
import contextlib, io, json, sys
from demo.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
heavy = {name.split(".")[0] for name in sys.modules} & set(HEAVY)
print(json.dumps(sorted(heavy)))
print(json.dumps(sorted(sys.modules)))
"""


def modules(*argv: str) -> tuple[set[str], set[str]]:
    """The heavy packages a command loads, and every module it loads."""
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True
    )
    heavy: list[str] = json.loads(done.stdout.splitlines()[-2])
    every: list[str] = json.loads(done.stdout.splitlines()[-1])
    return set(heavy), set(every)


def loaded(*argv: str) -> set[str]:
    return modules(*argv)[0]


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["list", "--lang", "zh"]])
def test_help_and_list_load_no_database_schema_or_app(argv: list[str]) -> None:
    heavy, every = modules(*argv)
    assert heavy == set()
    assert {m for m in every if m.startswith(LIGHT_WITHOUT)} == set()


def test_the_worker_options_name_every_task_kind() -> None:
    # spelt out so that the parser is built without the kinds' module: held to it here
    from core.sim.kinds import KINDS
    from core.tools.worker_options import KIND_NAMES

    assert tuple(KINDS) == KIND_NAMES


def test_check_loads_the_schema_but_no_database_or_app() -> None:
    assert loaded("check", "scenarios/01_fog.toml") == {"pydantic"}


def test_play_loads_no_app() -> None:
    assert "textual" not in loaded("play", "01_fog", "--json")


def test_a_sqlite_play_loads_nothing_of_postgresql_nor_any_sql_library() -> None:
    heavy, every = modules("play", "01_fog", "--json")
    assert "core.engine.store" in every  # it did run on the engine
    # the statements are text compiled ahead of time, the scenario parsed ahead of time
    assert heavy & {"psycopg", "sqlalchemy", "pydantic"} == set()
    assert {m for m in every if m.startswith(("sqlalchemy", "sqlmodel"))} == set()


def test_postgresql_still_gets_the_partial_indexes() -> None:
    # declared for SQLite alone in the models; PostgreSQL's DDL adds its own predicate
    from core.engine.backends.postgresql import _ddl

    created = dict(_ddl())
    assert created["ix_agent_tasks_queue"].endswith("WHERE status = 'queued'")
    assert created["ix_agent_tasks_running_expiry"].endswith("WHERE status = 'running'")
    assert "WHERE" not in created["ix_agent_tasks_fence"]
