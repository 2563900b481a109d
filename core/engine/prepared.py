"""The statements a store runs: the text compiled ahead of time, else compiled here once.

A run reads its statements from core/engine/precompiled.py's files and never loads SQLAlchemy
(the most of its start); a policy or a dialect the files do not hold is compiled from the
expressions, once per process, as before there were files.
"""

from typing import TYPE_CHECKING

from core.engine.policies import Policy
from core.engine.sql_text import (
    BatchStatements,
    Statements,
    precompiled_batch,
    precompiled_statements,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Dialect

_STATEMENTS: dict[tuple[str, Policy], Statements] = {}
_BATCH: dict[tuple[str, Policy], BatchStatements] = {}


def _dialect(name: str) -> "Dialect":
    if name == "postgresql":
        from core.engine.backends import postgresql

        return postgresql.dialect()
    if name == "sqlite":
        from core.engine.backends import sqlite

        return sqlite.dialect()
    raise ValueError(f"no statements for a database that speaks {name!r}")


def store_statements(dialect: str, policy: Policy) -> Statements:
    """The statements of a dialect ("sqlite", "postgresql") and a policy."""
    found = _STATEMENTS.get((dialect, policy))
    if found is None:
        found = precompiled_statements(dialect, policy)
        if found is None:
            from core.engine.statements import statements_for

            found = statements_for(_dialect(dialect), policy)
        found = _STATEMENTS.setdefault((dialect, policy), found)
    return found


def store_batch_statements(dialect: str, policy: Policy) -> BatchStatements:
    """The batch statements, as `store_statements`."""
    found = _BATCH.get((dialect, policy))
    if found is None:
        found = precompiled_batch(dialect, policy)
        if found is None:
            from core.engine.batch_statements import batch_statements_for

            found = batch_statements_for(_dialect(dialect), policy)
        found = _BATCH.setdefault((dialect, policy), found)
    return found
