"""`borrowed-keys serve`: the app in a browser."""
