"""Turning the store's SQLAlchemy expressions into SQL text: the compiled statement, how its
parameters are spelled per driver, and the database clock each dialect reads.
"""

import re
from typing import Any

from sqlalchemy import BigInteger
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.functions import FunctionElement

from core.engine.backends import POSTGRESQL_CLOCK_MS
from core.engine.sql_text import Stmt

# How a named parameter is spelled: `:name` (sqlite3) or `%(name)s` (psycopg).
_PARAM_PATTERNS = {
    "named": re.compile(r"(?<![:\w]):(\w+)"),
    "pyformat": re.compile(r"%\((\w+)\)s"),
}


def _sql(stmt: ClauseElement, dialect: Dialect) -> Stmt:
    compiled: Any = stmt.compile(dialect=dialect)
    pattern = _PARAM_PATTERNS.get(dialect.paramstyle)
    if pattern is None:  # pragma: no cover - both dialects in use are covered
        raise NotImplementedError(f"paramstyle {dialect.paramstyle}")
    # Constants in the expressions (status = 'running', LIMIT 1) are written into the SQL
    # as literals; only the named parameters are supplied on each call. With a constant
    # left as a parameter, SQLite re-prepares any statement whose parameter could pick a
    # partial index (status = ?) at every execution (the claim cost ~4x more), and
    # PostgreSQL's generic plans could not use those partial indexes at all.
    literals = {
        name: compiled.render_literal_value(bind.effective_value, bind.type)
        for bind, name in compiled.bind_names.items()
        if not bind.required
    }
    sql = pattern.sub(lambda m: literals.get(m.group(1), m.group(0)), str(compiled))
    return Stmt(sql)


class db_now_ms(FunctionElement[int]):
    """The database's clock, integer milliseconds since the Unix epoch, read by the statement.

    Each dialect compiles it: SQLite the machine's clock, PostgreSQL the server's.
    """

    type = BigInteger()
    inherit_cache = True


@compiles(db_now_ms, "sqlite")
def _db_now_ms_sqlite(_element: db_now_ms, _compiler: Any, **_kw: Any) -> str:
    # 'now' is read once per statement step from the machine's clock, to the millisecond.
    # julianday() keeps it (unixepoch('subsec') needs SQLite 3.42); ROUND takes away the
    # double's error, under 0.05 ms at today's dates.
    return "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"


@compiles(db_now_ms, "postgresql")
def _db_now_ms_postgresql(_element: db_now_ms, _compiler: Any, **_kw: Any) -> str:
    return POSTGRESQL_CLOCK_MS
