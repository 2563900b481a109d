"""PostgreSQL only: the backend, run schemas, start-up, scenarios and the app on it."""
