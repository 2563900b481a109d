"""The statements a store runs: the text compiled ahead of time, else compiled here once.

A run reads its statements from core/engine/precompiled.py's files and never loads SQLAlchemy
(the most of its start); a policy or a dialect the files do not hold is compiled from the
expressions, once per process, as before there were files.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from core.engine.policies import Policy
from core.engine.sql_text import (
    BatchStatements,
    Statements,
    precompiled_batch,
    precompiled_statements,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Dialect

T = TypeVar("T")

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

    def compiled() -> Statements:
        from core.engine.statements import statements_for

        return statements_for(_dialect(dialect), policy)

    return _kept(_STATEMENTS, dialect, policy, precompiled_statements, compiled)


def store_batch_statements(dialect: str, policy: Policy) -> BatchStatements:
    """The batch statements, as `store_statements`."""

    def compiled() -> BatchStatements:
        from core.engine.batch_statements import batch_statements_for

        return batch_statements_for(_dialect(dialect), policy)

    return _kept(_BATCH, dialect, policy, precompiled_batch, compiled)


def _kept(
    kept: dict[tuple[str, Policy], T],
    dialect: str,
    policy: Policy,
    precompiled: Callable[[str, Policy], T | None],
    compiled: Callable[[], T],
) -> T:
    """Once per process: the precompiled text, else the expressions compiled."""
    found = kept.get((dialect, policy))
    if found is None:
        found = precompiled(dialect, policy)
        if found is None:
            found = compiled()
        found = kept.setdefault((dialect, policy), found)
    return found
