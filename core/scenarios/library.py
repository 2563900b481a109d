"""The bundled scenario library: the files shipped in the `scenarios` package, found by name."""

import difflib
import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from core.scenarios.format import Scenario, ScenarioError, load_scenario, parse_scenario


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
    # `lexists`: a link that leads nowhere (or round in a loop) is still a file's name, and
    # reading it says what is wrong with it; only a name that is no file at all may be a
    # bundled scenario's.
    if not os.path.lexists(path):
        bundled = find_bundled(name)
        if bundled is not None and "/" not in name and "\\" not in name:
            return parse_scenario(bundled.read_bytes(), f"scenarios/{bundled.name}")
        if "/" not in name and "\\" not in name:
            # A presenter typing a lesson's name from memory gets the names it is near.
            near = near_names(name)
            hint = f"did you mean {' or '.join(near)}? " if near else ""
            raise ScenarioError(
                name,
                None,
                f"no such file, nor a bundled scenario of that name ({hint}"
                f"`borrowed-keys list` names them all)",
            )
    return load_scenario(name)


def near_names(name: str) -> list[str]:
    """The bundled scenarios' names closest to `name`, best first (at most three)."""
    stems = [f.name.removesuffix(".toml") for f in bundled_files()]
    stem = name.removesuffix(".toml")
    words = [
        w for w in stem.lower().replace("-", "_").split("_") if len(w) >= 3 and not w.isdigit()
    ]
    by_words = [s for s in stems if any(w in s for w in words)]
    close = difflib.get_close_matches(stem, stems, n=3, cutoff=0.5)
    return list(dict.fromkeys([*close, *by_words]))[:3]
