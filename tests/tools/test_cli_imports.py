"""A command imports what it runs and no more: `--help` and `list` load no database layer,
no scenario schema and no app; `check` no database layer; `play` no app. Each is run in a
fresh interpreter and its loaded modules looked at (what is loaded, not how long it takes)."""

import json
import subprocess
import sys

import pytest

HEAVY = ("sqlalchemy", "sqlmodel", "pydantic", "textual", "psycopg")

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
"""


def loaded(*argv: str) -> set[str]:
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True
    )
    found: list[str] = json.loads(done.stdout.splitlines()[-1])
    return set(found)


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["list", "--lang", "zh"]])
def test_help_and_list_load_no_database_schema_or_app(argv: list[str]) -> None:
    assert loaded(*argv) == set()


def test_check_loads_the_schema_but_no_database_or_app() -> None:
    assert loaded("check", "scenarios/01_fog.toml") == {"pydantic"}


def test_play_loads_no_app() -> None:
    assert "textual" not in loaded("play", "01_fog", "--json")
