"""The bundled scenario library: the files shipped in the `scenarios` package, found by name."""

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from core.scenarios.format import Scenario, load_scenario, parse_scenario


def bundled_files() -> list[Traversable]:
    """The scenario files shipped in the `scenarios` package, by name."""
    try:
        root = resources.files("scenarios")
    except ModuleNotFoundError:
        return []
    files = [f for f in root.iterdir() if f.is_file() and f.name.endswith(".toml")]
    return sorted(files, key=lambda f: f.name)


def find_bundled(name: str) -> Traversable | None:
    stem = name.removesuffix(".toml")
    return next((f for f in bundled_files() if f.name.removesuffix(".toml") == stem), None)


def open_scenario(name: str) -> Scenario:
    """A path, or else the name of a bundled scenario (with or without `.toml`)."""
    path = Path(name)
    if not path.exists():
        bundled = find_bundled(name)
        if bundled is not None and "/" not in name and "\\" not in name:
            return parse_scenario(bundled.read_bytes(), f"scenarios/{bundled.name}")
    return load_scenario(name)
