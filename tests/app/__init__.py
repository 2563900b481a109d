"""The Textual app: pilot tests, layouts and snapshots (`__snapshots__`, keyed by module)."""
