"""Database backends: everything specific to one database lives in its module."""

# PostgreSQL's clock in integer milliseconds. clock_timestamp(), not now(): now() is the
# start of the transaction, and a statement must be judged at the time it runs. (Here, not
# in postgresql.py, so that compiling statements does not import psycopg.)
POSTGRESQL_CLOCK_MS = "CAST(ROUND(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)"
