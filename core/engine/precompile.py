"""Writes the store's SQL compiled ahead of time (core/engine/precompiled.py reads it).

`python -m core.engine.precompile` compiles every statement of every policy for SQLite and
PostgreSQL, and SQLite's DDL, from the SQLAlchemy expressions and the SQLModel tables, into
`compiled.<dialect>.json` beside this module; `--check` says whether the files are what the
expressions compile to now, and exits 1 when they are not. tests/engine/test_precompiled.py
runs the check, so a statement changed without writing the files again fails the tests.
"""

import dataclasses
import itertools
import json
import sys
from typing import Any

from core.engine import precompiled
from core.engine.backends import postgresql, sqlite
from core.engine.batch_statements import batch_statements_for
from core.engine.policies import Policy
from core.engine.statements import statements_for

DIALECTS = ("sqlite", "postgresql")


def every_policy() -> list[Policy]:
    """Every policy there is: each switch on and off (the modes use some of them; a store
    made with any other is served the same way)."""
    return [
        Policy(**dict(zip(precompiled.POLICY_SWITCHES, switches, strict=True)))
        for switches in itertools.product((True, False), repeat=len(precompiled.POLICY_SWITCHES))
    ]


def build(dialect: str) -> dict[str, Any]:
    """The file's content for one dialect: each text once, each policy's fields naming them."""
    compiler = sqlite.dialect() if dialect == "sqlite" else postgresql.dialect()
    pool: list[str] = []
    at: dict[str, int] = {}

    def index(record: Any) -> dict[str, int | None]:
        fields: dict[str, int | None] = {}
        for field in dataclasses.fields(record):
            stmt = getattr(record, field.name)
            if stmt is None:
                fields[field.name] = None
                continue
            if stmt.sql not in at:
                at[stmt.sql] = len(pool)
                pool.append(stmt.sql)
            fields[field.name] = at[stmt.sql]
        return fields

    statements: dict[str, Any] = {}
    batch: dict[str, Any] = {}
    for policy in every_policy():
        key = precompiled.policy_key(tuple(getattr(policy, n) for n in precompiled.POLICY_SWITCHES))
        statements[key] = index(statements_for(compiler, policy))
        batch[key] = index(batch_statements_for(compiler, policy))
    found: dict[str, Any] = {
        "schema_version": precompiled.SCHEMA_VERSION,
        "texts": pool,
        "statements": statements,
        "batch": batch,
    }
    if dialect == "sqlite":
        found["tables"], found["indexes"] = sqlite.compiled_ddl()
    return found


def render(dialect: str) -> str:
    return json.dumps(build(dialect), ensure_ascii=False, indent=0) + "\n"


def main(argv: list[str]) -> int:
    stale = [d for d in DIALECTS if _on_disk(d) != render(d)]
    if "--check" in argv:
        for dialect in stale:
            print(
                f"{precompiled.path_for(dialect).name}: not what the statements compile to; "
                "run `make generated`"
            )
        return 1 if stale else 0
    for dialect in stale:
        precompiled.path_for(dialect).write_text(render(dialect), encoding="utf-8")
        print(f"wrote {precompiled.path_for(dialect).name}")
    return 0


def _on_disk(dialect: str) -> str | None:
    try:
        return precompiled.path_for(dialect).read_text(encoding="utf-8")
    except OSError:
        return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
