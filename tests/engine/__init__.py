"""The lease engine: the store, its statements, drivers and backends, on SQLite and PostgreSQL."""
