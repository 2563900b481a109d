"""A scenario's head: what the app can say of a file before the file format loads.

The format (pydantic, ~50 models) and the engine under a run take most of a second to load;
the file's TOML alone takes a few milliseconds to read. The app paints its first frame from
this (title, number of steps, mode) while the run is built off the loop, then the run's own
frame replaces it. Nothing here judges the file: a head that reads is no promise that the
file plays (the format says that, when the run is built); a head that does not read is
None, and the file is then opened the slow way, which says what is wrong with it.
"""

import os
import tomllib
from pathlib import Path
from typing import NamedTuple

from core.engine.modes import Mode
from core.scenarios.glossary import SANDBOX_TITLE, SANDBOX_TITLE_ZH
from core.scenarios.library import find_bundled


class ScenarioHead(NamedTuple):
    title: str
    title_zh: str | None
    steps: int | None  # None: the sandbox, which has no script
    mode: str  # the mode the run starts in (a Mode's value)

    def title_in(self, lang: str) -> str:
        return self.title_zh if lang == "zh" and self.title_zh else self.title


def sandbox_head(mode: Mode | None = None) -> ScenarioHead:
    return ScenarioHead(SANDBOX_TITLE, SANDBOX_TITLE_ZH, None, (mode or Mode.CORRECT).value)


def read_head(name: str, mode: Mode | None = None) -> ScenarioHead | None:
    """The head of a scenario file (a path, or a bundled scenario's name, as
    `library.open_scenario` finds them), or None when it does not read as one."""
    path = Path(name)
    try:
        if os.path.lexists(path):
            raw = path.read_bytes()
        else:
            bundled = find_bundled(name)
            if bundled is None or "/" in name or "\\" in name:
                return None
            raw = bundled.read_bytes()
        doc = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    title, title_zh = doc.get("title"), doc.get("title_zh")
    steps = doc.get("step", [])
    own = doc.get("mode", Mode.CORRECT.value)
    if not (isinstance(title, str) and title.strip() and isinstance(title_zh, str | None)):
        return None
    if not isinstance(steps, list) or own not in {m.value for m in Mode}:
        return None
    return ScenarioHead(title, title_zh, len(steps), mode.value if mode else own)
