"""Real worker processes on a real database, supervised, faulted and judged (`borrowed-keys
fleet`): below the app and the tools, beside the scenarios."""
