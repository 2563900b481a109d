"""core/engine/lease.sqlite.sql and lease.postgresql.sql are the statements the store runs in
the correct mode, laid out to be read: generated from the compiled statements, and checked
here against them, so the readable page cannot drift from what runs."""

import re

import pytest

from core.engine.lease_sql import QUERIES, dialects, path_for, render
from core.engine.modes import Mode
from core.engine.policies import policy_for
from core.engine.statements import statements_for


@pytest.mark.parametrize("dialect_name", ["sqlite", "postgresql"])
def test_the_readable_file_is_what_the_store_compiles(dialect_name: str) -> None:
    shown = path_for(dialect_name).read_text(encoding="utf-8")
    assert shown == render(dialects()[dialect_name]), (
        f"{path_for(dialect_name).name} is stale: run `python -m core.engine.lease_sql`"
    )


@pytest.mark.parametrize("dialect_name", ["sqlite", "postgresql"])
def test_each_named_query_is_its_statement_word_for_word(dialect_name: str) -> None:
    """Laid out on many lines, each query is still the compiled statement, token for token."""
    statements = statements_for(dialects()[dialect_name], policy_for(Mode.CORRECT))
    text = path_for(dialect_name).read_text(encoding="utf-8")
    bodies = dict(re.findall(r"-- name: (\w+)\n(?:-- [^\n]*\n)*(.*?;)\n", text, re.DOTALL))
    expected = [q for q in QUERIES if getattr(statements, q.field) is not None]
    assert list(bodies) == [q.name for q in expected]
    for query in expected:
        compiled = getattr(statements, query.field).sql
        assert bodies[query.name].split() == (compiled + ";").split() or _same_update(
            bodies[query.name], compiled
        ), query.name


def _same_update(shown: str, compiled: str) -> bool:
    """An UPDATE is shown without its table's name on each column, as the seed prints it."""
    flat = " ".join(compiled.split()).replace("agent_tasks.", "")
    return "".join(shown.split()) == "".join((flat + ";").split())
