"""A fenced downstream service of the project's own: the "下游存储" and the tool APIs an agent
calls, over HTTP on a loopback port, with books of its own (a SQLite file apart from the
lease store's)."""
