"""The lease engine: the store, its statements, drivers and database backends."""
