"""The import graph of core/ and demo/: no circle between any two modules (type-checking
imports counted: a circle there is still two modules that cannot be read apart), and every
package held by an import-linter contract of its own."""

import copy
import tomllib
from collections.abc import Iterable
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "demo")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every group of modules that import one another round (Tarjan's strongly connected
    components of more than one module, or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a long chain of imports is no recursion limit
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in graph.find_modules_directly_imported_by(node):
                    found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_anywhere(graph: grimp.ImportGraph) -> None:
    assert circles(graph) == []


def test_a_planted_circle_is_found(graph: grimp.ImportGraph) -> None:
    graph = copy.deepcopy(graph)
    graph.add_import(importer="core.engine.vocabulary", imported="core.sim.spec")
    assert any("core.sim.spec" in group for group in circles(graph))


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _names(contract: dict[str, object]) -> Iterable[str]:
    """Every module a contract names, in full."""
    containers = contract.get("containers") or [""]
    assert isinstance(containers, list)
    for key in ("layers", "modules", "source_modules"):
        entries = contract.get(key) or []
        assert isinstance(entries, list)
        for entry in entries:
            for name in str(entry).replace("|", ":").split(":"):
                for container in containers:
                    yield f"{container}.{name.strip()}" if container else name.strip()


def test_every_package_has_a_contract(graph: grimp.ImportGraph) -> None:
    named = {name for c in _contracts() for name in _names(c)}
    packages = sorted(m for m in graph.modules if graph.find_children(m))
    unheld = [p for p in packages if not any(child in named for child in graph.find_children(p))]
    assert unheld == []


def test_no_circle_contract_covers_core_and_the_app() -> None:
    acyclic = [c for c in _contracts() if c["type"] == "acyclic_siblings"]
    assert [sorted(c["ancestors"]) for c in acyclic] == [sorted(PACKAGES)]  # type: ignore[call-overload]
