"""Database backends: everything specific to one database lives in its module."""

import os

from core.engine import precompiled
from core.engine.errors import SchemaVersionError, StoreError

# PostgreSQL's clock in integer milliseconds. clock_timestamp(), not now(): now() is the
# start of the transaction, and a statement must be judged at the time it runs. (Here, not
# in postgresql.py, so that compiling statements does not import psycopg.)
POSTGRESQL_CLOCK_MS = "CAST(ROUND(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)"
# The same clock at the start of the transaction: one value for all its statements. A
# statement sent in the same round trip as its BEGIN reads this where the others are given
# the clock read just after BEGIN as a parameter: the same instant, told without a trip.
# (now() is transaction_timestamp(); short, as it is written in six places of the claim.)
POSTGRESQL_TXN_CLOCK_MS = "(EXTRACT(EPOCH FROM now())*1000)::int8"


def check_stamp(
    where: str,
    database: str,
    tables: set[str],
    stamp: str | None,
    *,
    untouched: str,
    oldest: int = 1,
) -> None:
    """Refuse a database that is not a store of ours, or one stamped with a version this code
    cannot open, before anything is written to it (`untouched` ends each message).

    `tables` are the tables found (a backend leaves out its own bookkeeping ones); `stamp`
    is store_meta's schema_version, or None when there is none yet; `oldest` is the first
    version this backend can bring up to date.
    """
    if "store_meta" not in tables:
        if tables:
            # Someone else's database: adding our tables to it would be a surprise.
            raise StoreError(
                f"{where}: a {database} database, but not a borrowed-keys store "
                f"(it has tables {', '.join(sorted(tables)[:3])}); {untouched}"
            )
        return
    if stamp is None:
        return
    try:
        version = int(stamp)
    except (TypeError, ValueError):
        raise StoreError(f"{where}: unreadable schema version {stamp!r} ({untouched})") from None
    if version > precompiled.SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{where}: schema version {stamp} is newer than this borrowed-keys "
            f"understands ({precompiled.SCHEMA_VERSION}); upgrade borrowed-keys ({untouched})"
        )
    if version < oldest:
        raise SchemaVersionError(
            f"{where}: schema version {stamp} is older than any borrowed-keys store on "
            f"{database} ({oldest}); {untouched}"
        )


SQLITE_URL_PREFIX = "sqlite:///"
POSTGRESQL_URL_PREFIXES = ("postgresql://", "postgres://")


def sqlite_path(target: str | os.PathLike[str]) -> str | os.PathLike[str] | None:
    """The SQLite file a database name means, or None for a PostgreSQL URL.

    One name chooses the backend everywhere: `postgresql://...` (or `postgres://...`) is
    PostgreSQL; `sqlite:///PATH` or a plain path is a SQLite file (`:memory:` for none).
    """
    if isinstance(target, str):
        if target.startswith(POSTGRESQL_URL_PREFIXES):
            return None
        if target.startswith(SQLITE_URL_PREFIX):
            return target.removeprefix(SQLITE_URL_PREFIX) or ":memory:"
    return target
