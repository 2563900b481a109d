"""The store's SQL compiled ahead of time: what a process reads instead of loading SQLAlchemy.

The statements are SQLAlchemy expressions over the SQLModel tables (core/engine/statements.py,
core/engine/batch_statements.py, core/engine/models.py); compiling them needs both libraries,
and importing them is most of a run's start (~0.3 s of the ~0.45 s before its first frame).
`compiled.sqlite.json` and `compiled.postgresql.json` beside this module hold the text of
every statement for every policy, and SQLite's DDL; `python -m core.engine.precompile` writes
them from the expressions, and tests/engine/test_precompiled.py checks they are what the
expressions compile to now, so the text cannot drift from its source.

This module reads only JSON: it is imported by the lowest layers of the engine.
"""

import json
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# 2: ledger.task_id (a page names its task), agent_tasks.queue_seq (first in, first out),
# and fence tokens drawn from `fence_counter`, no longer max(fence_token) + 1.
SCHEMA_VERSION = 2

FENCE_COUNTER = "fence_token"  # the name of fence_counter's one row

# The policies' switches, in the order a key names them (see `policy_key`): Policy's fields,
# which tests/engine/test_precompiled.py checks (a switch left out would be served the text
# compiled with its default).
POLICY_SWITCHES = ("expiry", "fencing", "fence_tokens", "idempotency", "guards")


def path_for(dialect: str) -> Path:
    return HERE / f"compiled.{dialect}.json"


@cache
def _read(dialect: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = json.loads(path_for(dialect).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        # compiled again from the expressions (core/engine/prepared.py): slower, as true
        return None
    if not isinstance(found, dict) or found.get("schema_version") != SCHEMA_VERSION:
        return None
    return found


def policy_key(switches: tuple[bool, ...]) -> str:
    """A policy's name in the file: one digit per switch of POLICY_SWITCHES ("11111")."""
    return "".join("1" if on else "0" for on in switches)


def texts(dialect: str, kind: str, key: str) -> dict[str, str | None] | None:
    """Each statement's SQL of one kind ("statements" or "batch") for one policy, by field;
    None when the file is missing, damaged or does not hold it."""
    found = _read(dialect)
    if found is None:
        return None
    try:
        pool: list[str] = found["texts"]
        fields: dict[str, int | None] | None = found[kind].get(key)
        if fields is None:
            return None
        out = {name: None if at is None else pool[at] for name, at in fields.items()}
    except (KeyError, IndexError, TypeError, AttributeError):  # a file of another shape
        return None
    return out if all(v is None or isinstance(v, str) for v in out.values()) else None


def ddl(dialect: str) -> tuple[list[str], list[str]] | None:
    """The CREATE TABLE and CREATE INDEX statements (each IF NOT EXISTS), or None."""
    found = _read(dialect)
    if found is None:
        return None
    tables, indexes = found.get("tables"), found.get("indexes")
    if not isinstance(tables, list) or not isinstance(indexes, list):
        return None
    if not all(isinstance(sql, str) for sql in (*tables, *indexes)):
        return None
    return list(tables), list(indexes)
