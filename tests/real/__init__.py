"""Real processes on the wall clock: workers on SQLite files and PostgreSQL, the fleet under
its supervisor (core/fleet), workers in network namespaces."""
