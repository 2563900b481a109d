"""Which driver a database name gets: `postgresql://...` (or `postgres://...`) is
PostgreSQL, anything else a SQLite file (see `core.engine.backends.sqlite_path`)."""

import os

from core.engine.backends import sqlite_path
from core.engine.drivers import AsyncSqliteDriver, Driver, InlineDriver


def inline_driver(path: str | os.PathLike[str], *, scratch: bool = False) -> Driver:
    """A driver whose calls never suspend. With `scratch` (a simulation), one on PostgreSQL
    works in a new schema of its own, dropped on close; a SQLite file is refused if real
    workers use it."""
    file = sqlite_path(path)
    if file is None:
        # psycopg is imported only by stores on PostgreSQL.
        from core.engine.drivers_pg import PgInlineDriver

        return PgInlineDriver.open(str(path), scratch=scratch)
    return InlineDriver.open(file, simulation=scratch)


async def async_driver(path: str | os.PathLike[str], *, scratch: bool = False) -> Driver:
    """A driver for real-clock workers in an asyncio program: AsyncSqliteDriver on SQLite,
    a psycopg connection on a thread of its own on PostgreSQL."""
    file = sqlite_path(path)
    if file is None:
        from core.engine.drivers_pg import PgThreadDriver

        return await PgThreadDriver.open(str(path), scratch=scratch)
    return await AsyncSqliteDriver.open(file)


def dialect_name(driver: Driver) -> str:
    """The name of the SQL dialect a driver's database speaks ("sqlite" unless the driver
    says, as a PostgreSQL driver does with its SQLAlchemy dialect)."""
    found = getattr(driver, "dialect", None)
    return "sqlite" if found is None else str(found.name)
