"""A real PostgreSQL server for the tests, with nothing to install by hand.

`BK_TEST_POSTGRES_URL` names a server to use instead. Otherwise the `pgserver` wheel (the
PostgreSQL binaries in a pip package) starts one over a Unix socket in the test run's
data folder. pytest-xdist workers of one run share that folder, and pgserver counts the
processes using a data folder: the first starts the server, the last one out stops it and
deletes the folder.
Each test works in a schema of its own, so tests never see each other's rows.
"""

import os
import secrets
import warnings
from pathlib import Path
from typing import Any

ENV_URL = "BK_TEST_POSTGRES_URL"


def start_server(folder: Path) -> tuple[str, Any]:
    """The URL of a running server (and the handle that keeps it up, None for the env's)."""
    url = os.environ.get(ENV_URL)
    if url:
        return url, None
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset (as under CI) and uses /tmp.
        warnings.simplefilter("ignore")
        import pgserver

        # pgserver makes the folder with exist_ok=False: two xdist workers starting
        # together would race there, so it exists before either asks.
        folder.mkdir(exist_ok=True)
        server = pgserver.get_server(folder, cleanup_mode="delete")
    return str(server.get_uri()), server


def with_schema(url: str, schema: str | None = None) -> str:
    """The URL of a fresh, unused schema on the same server."""
    name = schema or f"t_{secrets.token_hex(6)}"
    return f"{url}{'&' if '?' in url else '?'}schema={name}"
