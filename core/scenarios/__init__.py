"""Scenarios: the file format, the player, the writer and the session the app drives."""
