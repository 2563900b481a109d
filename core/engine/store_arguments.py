"""The checks of what opens a store: its mode, its configuration, its clock, its path and its
flags, each refused with an `InvalidArgument` that names what was wrong."""

import os

from core.engine.clock import Clock
from core.engine.config import LeaseConfig, Mode
from core.engine.errors import InvalidArgument


def check_mode(mode: object) -> Mode:
    """A Mode, or its name; anything else would run as no mode at all."""
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str) and mode in Mode.__members__.values():
        return Mode(mode)
    raise InvalidArgument(
        f"mode {ascii(mode)[:40]} is not a mode; the modes are " + ", ".join(m.value for m in Mode)
    )


def check_config(config: object) -> LeaseConfig:
    if config is None:
        return LeaseConfig()
    if not isinstance(config, LeaseConfig):
        raise InvalidArgument(f"config must be a LeaseConfig, got {type(config).__name__}")
    return config


def check_clock(clock: object) -> Clock:
    if not callable(getattr(clock, "now_ms", None)):
        raise InvalidArgument(
            f"clock must have a now_ms() (DatabaseClock, VirtualClock), got {type(clock).__name__}"
        )
    return clock  # type: ignore[return-value]


def check_path(path: object) -> str | os.PathLike[str]:
    """A file name, `sqlite:///PATH` or a `postgresql://` URL as text: not bytes, no NUL."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidArgument(
            f"path must be a file name or a database URL, got {type(path).__name__}"
        )
    name = os.fspath(path)
    if not isinstance(name, str):
        raise InvalidArgument("path must be text, not bytes")
    if not name or "\x00" in name:
        raise InvalidArgument(f"path {ascii(name)[:60]} is empty or holds a NUL character")
    return path


def check_flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{what} must be True or False, got {type(value).__name__}")
    return value
