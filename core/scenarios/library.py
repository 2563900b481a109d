"""The bundled scenario library: the files shipped in the `scenarios` package, found by name.

The file format (pydantic: a few hundred milliseconds to build its schema) loads when a
scenario is opened, not when the library is looked at: `list` reads only the titles.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # (importlib.abc loads importlib.resources: a `list` has no need of it)
    from importlib.abc import Traversable

    from core.scenarios.format import Scenario


def bundled_files() -> list[Traversable]:
    """The scenario files shipped in the `scenarios` package, by name."""
    # The package's folder as the import system found it: importlib.resources (and the
    # temporary files and archives it is ready for) would load for every `list`, and a
    # package in a folder is what is installed; anything else is asked of resources.
    spec = importlib.util.find_spec("scenarios")
    if spec is None:
        return []
    places = list(spec.submodule_search_locations or ())
    root: Traversable
    if len(places) == 1 and os.path.isdir(places[0]):
        root = Path(places[0])
    else:
        from importlib import resources

        root = resources.files("scenarios")
    files = [f for f in root.iterdir() if f.is_file() and f.name.endswith(".toml")]
    return sorted(files, key=lambda f: f.name)


def find_bundled(name: str) -> Traversable | None:
    stem = name.removesuffix(".toml")
    return next((f for f in bundled_files() if f.name.removesuffix(".toml") == stem), None)


def open_scenario(name: str) -> Scenario:
    """A path, or else the name of a bundled scenario (with or without `.toml`)."""
    from core.scenarios import glossary, precompiled
    from core.scenarios.format import ScenarioError

    path = Path(name)
    # `lexists`: a link that leads nowhere (or round in a loop) is still a file's name, and
    # reading it says what is wrong with it; only a name that is no file at all may be a
    # bundled scenario's.
    if not os.path.lexists(path):
        bundled = find_bundled(name)
        if bundled is not None and "/" not in name and "\\" not in name:
            data = bundled.read_bytes()
            # parsed ahead of time for exactly these bytes: the format's models never load
            found = precompiled.bundled(bundled.name, data)
            if found is not None:
                return found
            from core.scenarios.format import parse_scenario

            return parse_scenario(data, precompiled.label(bundled.name))
        if "/" not in name and "\\" not in name:
            # A presenter typing a lesson's name from memory gets the names it is near.
            near = near_names(name)
            told = {
                lang: glossary.file_mistake(
                    "no_such_scenario",
                    lang,
                    hint=glossary.file_mistake(
                        "near_names", lang, names=glossary.file_mistake("or", lang).join(near)
                    )
                    if near
                    else "",
                )
                for lang in ("en", "zh")
            }
            raise ScenarioError(name, None, told["en"], told["zh"])
    from core.scenarios.format import load_scenario

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


def listed_title(file: Traversable, lang: str) -> str:
    """A bundled scenario's title as `list` shows it, read from its TOML alone; only a file
    whose title is not plain text is loaded whole, to say why it cannot be played."""
    import tomllib

    try:
        doc = _top_keys(file.read_bytes().decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        doc = {}
    title, title_zh = doc.get("title"), doc.get("title_zh")
    if isinstance(title, str) and title.strip() and isinstance(title_zh, str | None):
        return title_zh if lang == "zh" and title_zh else title
    from core.scenarios.format import ScenarioError, parse_scenario

    try:
        return parse_scenario(file.read_bytes(), f"scenarios/{file.name}").title_in(lang)
    except ScenarioError as exc:
        if lang == "zh" and exc.message_zh is not None:
            return f"（无法播放：{exc.message_zh}）"
        return f"(cannot be played: {exc.message})"


_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)


def _top_keys(text: str) -> dict[str, object]:
    """The file's top-level keys, read from its text before the first table header
    (`[[step]]`): in TOML every top-level key comes before it, the titles too, and the steps
    are most of the file (parsing them all for the titles was most of what `list` did). A
    head cut inside a string or an array does not parse; then the whole file is read."""
    import tomllib

    table = _TABLE.search(text)
    if table is not None:
        with contextlib.suppress(tomllib.TOMLDecodeError):
            return tomllib.loads(text[: table.start()])
    return tomllib.loads(text)
