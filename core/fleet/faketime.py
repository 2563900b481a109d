"""A worker's clock set off on purpose: libfaketime, found where distributions put it, and
the environment that runs a process under it."""

import os
from pathlib import Path

# Where distributions put libfaketime (the multithreaded build: a worker runs threads).
_FAKETIME_DIRS = (
    "/usr/lib/x86_64-linux-gnu/faketime",
    "/usr/lib/aarch64-linux-gnu/faketime",
    "/usr/lib/faketime",
    "/usr/local/lib/faketime",
    "/usr/lib64/faketime",
)


def libfaketime() -> Path | None:
    """The libfaketime library, if it is installed."""
    for folder in _FAKETIME_DIRS:
        for name in ("libfaketimeMT.so.1", "libfaketime.so.1"):
            path = Path(folder) / name
            if path.exists():
                return path
    return None


def skewed_env(skew_ms: int) -> dict[str, str]:
    """The environment that runs a process under libfaketime, its wall clock `skew_ms` off.
    Its monotonic clock is left alone: the worker's sleeps take as long as they should."""
    lib = libfaketime()
    assert lib is not None
    preload = " ".join(p for p in (str(lib), os.environ.get("LD_PRELOAD", "")) if p)
    return {
        "LD_PRELOAD": preload,
        "FAKETIME": f"{skew_ms / 1000:+.3f}",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }
