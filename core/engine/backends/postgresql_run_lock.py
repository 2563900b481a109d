"""Whose PostgreSQL run schema is it: the run lock each owner holds, and the cleaner that
drops the run schemas whose owner is gone."""

import hashlib
from typing import Any

import psycopg
from psycopg import sql as pg_sql

DBConnection = psycopg.Connection[Any]
# The names of run schemas begin so: the cleaner looks only at these.
SCRATCH_PREFIX = "bk_run_"
# Schema work waits at most this long for any lock, then lets go and tries again after a
# pause. While a DDL statement waits for a table's lock, every later request for that
# table queues behind it: a heartbeat then waits as long as the DDL does. Half a second is
# what one heartbeat may lose to a starting worker, inside the renew window of any lease of
# a few seconds or more.
DDL_LOCK_TIMEOUT_MS = 500


def drop_schema(conn: DBConnection, schema: str) -> None:
    conn.execute(pg_sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(pg_sql.Identifier(schema)))


# -- whose run schema is it ---------------------------------------------------------------
#
# A run schema belongs to the process whose connections hold the schema's run lock (a
# session-level advisory lock, shared: one run may open several connections, and the
# cleaner's exclusive try fails while any of them is alive). The server lets it go when a
# connection ends, however the process ended (SIGKILL, a crash, a machine that went away):
# a run schema whose lock is free has no owner left, and the next run cleans it up. The
# one moment an owner is alive without its lock is while it reconnects after a lost
# connection; should its schema be dropped then, its next statement fails with one line,
# never silently.


def run_lock_key(schema: str) -> int:
    """The advisory lock key of a run schema (a signed 64-bit number from its name)."""
    digest = hashlib.blake2b(schema.encode(), digest_size=8, person=b"bk-run").digest()
    return int.from_bytes(digest, "big", signed=True)


def drop_stale_runs(conn: DBConnection, keep: str) -> list[str]:
    """Drop the run schemas on this server whose run has ended (never `keep`, the caller's
    own); the names dropped.

    Never one whose owner is alive: the owner's run lock is taken here first (without
    waiting), and a schema whose lock is held is left alone.
    """
    dropped: list[str] = []
    names = [
        name
        for (name,) in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", (SCRATCH_PREFIX,)
        )
        if name != keep
    ]
    for name in names:
        key = run_lock_key(name)
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if row is None or not row[0]:
            continue  # its run is alive
        try:
            # Nobody should be using a stale schema; if someone is, it waits for next time.
            conn.execute(f"SET lock_timeout = {DDL_LOCK_TIMEOUT_MS}")
            drop_schema(conn, name)
            dropped.append(name)
        except psycopg.Error:
            if conn.broken:
                raise
        finally:
            if not conn.broken:
                conn.execute("RESET lock_timeout")
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
    return dropped
