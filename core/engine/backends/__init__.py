"""Database backends: everything specific to one database lives in its module."""
