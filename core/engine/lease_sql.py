"""The correct mode's lease statements as SQL a person reads: `lease.sqlite.sql` and
`lease.postgresql.sql` beside this module, one named query after another in the order of a
lease's life (claim, heartbeat, checkpoint, fenced write, effect, complete).

The files are generated from the compiled statements the store runs (core/engine/statements.py)
and checked against them by tests/engine/test_lease_sql.py, so they cannot drift: after a
change to a statement, `python -m core.engine.lease_sql` writes them again. The mistake modes'
variants are not in them (core/engine/mistake_statements.py).
"""

import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

from sqlalchemy.engine import Dialect

from core.engine.modes import Mode
from core.engine.policies import policy_for
from core.engine.statements import Statements, statements_for

HERE = Path(__file__).resolve().parent


class Query(NamedTuple):
    """One named query of the file: the Statements field it is, and why it is there (the
    seed's own sentence where the rule is the seed's)."""

    name: str
    field: str
    why: str


# In the order of a lease's life, as docs/architecture.md walks it.
QUERIES: tuple[Query, ...] = (
    Query(
        "claim_named",
        "claim_named",
        "Claim a named task: queued, or running with its lease expired by the store's clock. "
        "Seed: Lease 的时间边界最好由统一的服务端时钟或数据库时钟裁决.",
    ),
    Query(
        "claim_any",
        "claim_any",
        "Claim the next task: the oldest expired lease first, else the first queued task.",
    ),
    Query(
        "fence_issued",
        "fence_issued",
        "Record the claim's fence token drawn from the one global counter (SQLite only; "
        "PostgreSQL draws from a SEQUENCE). Seed: fence_token 只增不减的围栏令牌.",
    ),
    Query(
        "heartbeat",
        "heartbeat",
        "Renew: only the current, live lease of a running task, whole (owner, lease token, "
        "fence token). Seed: 在资格到期前通过心跳续约.",
    ),
    Query(
        "checkpoint_gate",
        "checkpoint_gate",
        "A checkpoint is taken only under the current, live lease (the same gate).",
    ),
    Query("checkpoint_next_seq", "checkpoint_next_seq", "The box's next number for the task."),
    Query(
        "checkpoint_insert",
        "checkpoint_insert",
        "Seal the box: append-only, stamped with the writer's fence token. "
        "Seed: Checkpoint 决定接手之后从哪里继续.",
    ),
    Query(
        "checkpoint_latest",
        "checkpoint_latest",
        "What whoever comes next reads first: the newest box of the task.",
    ),
    Query(
        "ledger_write",
        "ledger_write",
        "The fenced write: a page is taken only from the task's current, live lease, and only "
        "if the page has seen no higher fence token. Seed: 存储层或状态机只接受当前最大的 token.",
    ),
    Query("ledger_token", "ledger_token", "The fence token a page was last written with."),
    Query(
        "effect_apply",
        "effect_apply",
        "An outside call applied once per idempotency key: a second call with the key is "
        "a no-op. Seed: Idempotency 负责“重复做时别把世界打坏”.",
    ),
    Query("effect_result", "effect_result", "What the first call with the key answered."),
    Query(
        "complete",
        "complete",
        "Complete under the current, live lease; a finished task holds no lease.",
    ),
    Query(
        "fail",
        "fail",
        "Fail under the current, live lease: queued again while attempts are left, else dead.",
    ),
)

# Where a statement breaks onto a new line: these keywords, outside parentheses.
_BREAKS = (
    " FROM ",
    " WHERE ",
    " ON CONFLICT ",
    " DO UPDATE SET ",
    " DO NOTHING",
    " RETURNING ",
    " ORDER BY ",
    " LIMIT ",
    " VALUES ",
    " SELECT ",
    " FOR SHARE",
)


def split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` where no parenthesis is open (a SET list holds CASE (...) values)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    parts.append(text[start:])
    return parts


def partition_top(text: str, sep: str) -> tuple[str, str, str]:
    """str.partition at the first `sep` outside parentheses (a subquery has its own WHERE)."""
    parts = split_top(text, sep)
    return (parts[0], sep, sep.join(parts[1:])) if len(parts) > 1 else (text, "", "")


def pretty_update(sql: str) -> str:
    """One compiled UPDATE laid out like the seed's: SET and WHERE one item a line."""
    # One table: its name on every column only hides the conditions being compared.
    flat = " ".join(sql.split()).replace("agent_tasks.", "")
    head, _, rest = flat.partition(" SET ")
    values, _, tail = partition_top(rest, " WHERE ")
    where, _, returning = partition_top(tail, " RETURNING ")
    lines = [head, "SET"]
    lines += [f"  {item}," for item in split_top(values, ", ")]
    lines[-1] = lines[-1].rstrip(",")
    conditions = split_top(where, " AND ")
    lines.append(f"WHERE {conditions[0]}")
    lines += [f"  AND {c}" for c in conditions[1:]]
    if returning:
        lines.append(f"RETURNING {returning}")
    return "\n".join(lines) + ";"


def pretty(sql: str) -> str:
    """Any compiled statement, one clause a line (an UPDATE as `pretty_update` lays it)."""
    flat = " ".join(sql.split())
    if flat.startswith("UPDATE ") and " SET " in flat:
        return pretty_update(flat)
    pieces = [flat]
    for sep in _BREAKS:
        pieces = [
            line
            for piece in pieces
            for i, part in enumerate(split_top(piece, sep))
            for line in [part if i == 0 else sep.strip() + " " + part]
        ]
    lines: list[str] = []
    for piece in (p.strip() for p in pieces):
        if piece.startswith("WHERE "):
            conditions = split_top(piece.removeprefix("WHERE "), " AND ")
            lines.append(f"WHERE {conditions[0]}")
            lines += [f"  AND {c}" for c in conditions[1:]]
        else:
            lines.append(piece)
    return "\n".join(lines) + ";"


def render(dialect: Dialect) -> str:
    """The file for one dialect, as `python -m core.engine.lease_sql` writes it."""
    statements: Statements = statements_for(dialect, policy_for(Mode.CORRECT))
    name = "SQLite" if dialect.name == "sqlite" else "PostgreSQL"
    out = [
        f"-- The lease statements of the correct mode, as the store runs them on {name}.",
        "-- Generated by `python -m core.engine.lease_sql` from core/engine/statements.py;",
        "-- tests/engine/test_lease_sql.py checks it is what the store compiles. :now is the",
        "-- store's clock, read once per transaction; :ttl and :deadline are the lease's",
        "-- configured times, all in milliseconds.",
    ]
    for query in QUERIES:
        stmt = getattr(statements, query.field)
        if stmt is None:
            continue
        what, _, seed = query.why.partition(" Seed: ")
        why = textwrap.wrap(what, 96) + ([f"Seed: {seed}"] if seed else [])
        out += ["", f"-- name: {query.name}", *(f"-- {line}" for line in why), pretty(stmt.sql)]
    return "\n".join(out) + "\n"


def dialects() -> dict[str, Dialect]:
    from core.engine.backends import postgresql, sqlite

    return {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect()}


def path_for(dialect_name: str) -> Path:
    return HERE / f"lease.{dialect_name}.sql"


def main() -> int:
    for dialect_name, dialect in dialects().items():
        path_for(dialect_name).write_text(render(dialect), encoding="utf-8")
        print(path_for(dialect_name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
