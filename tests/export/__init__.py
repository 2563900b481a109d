"""`borrowed-keys export`: the recorded page and its preview."""
