"""The parts below the app are tested without it: tests/engine, tests/sim, tests/scenarios and
tests/search load no Textual, so `make check` runs them without the app's start-up cost and a
change to the screen cannot break them.

Every module each of those folders' tests imports (at the top or inside a test) is imported
in a fresh interpreter, and Textual must not be among the modules that come with them. A
module that loads Textual only when called (the command line's `tui`) is fine: it is the
call that would drive the app, and such a test belongs in tests/app.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
NO_APP = ("engine", "sim", "scenarios", "search")


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, wherever in the file the import stands."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def loads_textual(modules: set[str]) -> list[str]:
    """Of `modules`, those whose import brings Textual in, each in a fresh interpreter."""
    probe = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    before = 'textual' in sys.modules\n"
        "    importlib.import_module(name)\n"
        "    if not before and 'textual' in sys.modules:\n"
        "        print(name)\n"
        "        sys.modules.pop('textual')\n"
        "        [sys.modules.pop(m) for m in list(sys.modules) if m.startswith('textual.')]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *sorted(modules)],
        capture_output=True,
        text=True,
        cwd=TESTS.parent,
        check=True,
    )
    return done.stdout.split()


@pytest.mark.parametrize("part", NO_APP)
def test_a_part_below_the_app_is_tested_without_textual(part: str) -> None:
    files = sorted((TESTS / part).rglob("*.py"))
    direct = {str(f.relative_to(TESTS)): imported_modules(f) for f in files}
    named = sorted(
        f for f, mods in direct.items() if any(m.split(".")[0] == "textual" for m in mods)
    )
    assert named == [], f"these import textual; they belong in tests/app: {named}"
    modules = set().union(*direct.values()) - {"__future__"}
    assert loads_textual(modules) == [], "these bring Textual in; their tests belong in tests/app"
