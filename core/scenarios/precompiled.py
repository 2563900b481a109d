"""The bundled scenarios parsed ahead of time: what a run opens instead of loading the format.

Parsing a scenario file needs the file format's pydantic models, a tenth of a second to import
before a run's first frame. `scenarios/precompiled.pickle` holds every bundled file parsed,
each beside the SHA-256 of the bytes it was parsed from; opening a bundled scenario whose
bytes hash the same takes it from there, and anything else (a file of one's own, a bundled
file changed since) is parsed as before. `python -m core.scenarios.precompiled` writes the
file; `--check` says whether it is what the files parse to now (tests/scenarios/
test_precompiled.py runs it), so it cannot drift from them.

The file is a pickle because a parsed scenario is a tree of frozen dataclasses and enums that
pickle keeps exactly (a test checks each comes back equal). A pickle can run code when read,
so this one is read as the modules beside it are trusted and no further: only from the
`scenarios` folder installed beside this code (never a `scenarios` folder that happens to be
first on the path), each entry only when the SHA-256 of its pickled bytes is the one written
beside it, and by an unpickler that builds nothing but this project's dataclasses and enums
(`_ScenarioTree`). Anything it cannot read is parsed from the TOML, as before there was a file.
"""

import dataclasses
import enum
import hashlib
import io
import pickle
import sys
from functools import cache
from pathlib import Path
from typing import Any

from core.scenarios.format.model import Scenario

FILE_NAME = "precompiled.pickle"
# The version of the file's layout: a file of another is not read.
VERSION = 2


class _ScenarioTree(pickle.Unpickler):
    """Builds only this project's dataclasses and enums (a scenario's tree): a pickle that
    names any other callable (os.system, eval, a class of another package) is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] == "core":
            found = super().find_class(module, name)
            if isinstance(found, type) and (
                dataclasses.is_dataclass(found) or issubclass(found, enum.Enum)
            ):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a class of a scenario")


def _load(data: bytes) -> Any:
    return _ScenarioTree(io.BytesIO(data)).load()


def _folder() -> Path:
    """The `scenarios` folder installed beside this code (core/ and scenarios/ are siblings
    in a checkout and in site-packages alike)."""
    return Path(__file__).resolve().parents[2] / "scenarios"


@cache
def _entries() -> dict[str, tuple[str, bytes, str]]:
    """Each file's name: the SHA-256 of its TOML, its pickled scenario, that pickle's SHA-256."""
    try:
        found = _load((_folder() / FILE_NAME).read_bytes())
        if not isinstance(found, dict) or found.get("version") != VERSION:
            return {}
        entries = found["scenarios"]
        if not isinstance(entries, dict):
            return {}
        return {
            name: (text_hash, payload, payload_hash)
            for name, (text_hash, payload, payload_hash) in entries.items()
            if isinstance(name, str) and isinstance(payload, bytes)
        }
    except Exception:  # a damaged file of any kind: every scenario is parsed from its TOML
        return {}


def label(name: str) -> str:
    """How a bundled file is named in its scenario's messages (`scenarios/01_fog.toml`)."""
    return f"scenarios/{name}"


def bundled(name: str, data: bytes) -> Scenario | None:
    """The bundled file `name` parsed, if the file holds it for exactly these bytes (and
    holds it undamaged); None, to parse the bytes, otherwise."""
    entry = _entries().get(name)
    if entry is None:
        return None
    text_hash, payload, payload_hash = entry
    if text_hash != _sha256(data) or payload_hash != _sha256(payload):
        return None
    try:
        scenario = _load(payload)
    except Exception:  # damaged past what the hash can tell: parsed from the TOML instead
        return None
    return scenario if isinstance(scenario, Scenario) else None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build(folder: Path) -> bytes:
    """The file's bytes: every bundled scenario file in `folder`, parsed."""
    from core.scenarios.format import parse_scenario

    scenarios: dict[str, tuple[str, bytes, str]] = {}
    for path in sorted(folder.glob("*.toml")):
        data = path.read_bytes()
        payload = pickle.dumps(parse_scenario(data, label(path.name)), 5)
        scenarios[path.name] = (_sha256(data), payload, _sha256(payload))
    return pickle.dumps({"version": VERSION, "scenarios": scenarios}, 5)


def _held(data: bytes) -> object:
    found = _load(data)
    scenarios = found["scenarios"]
    held = {name: (digest, _load(inner)) for name, (digest, inner, _h) in scenarios.items()}
    return found["version"], held


def main(argv: list[str]) -> int:
    folder = _folder()
    target = folder / FILE_NAME
    made = build(folder)
    # compared by what it holds, not by its bytes: a Python that pickles the same tree
    # another way does not call it stale
    try:
        same = _held(target.read_bytes()) == _held(made)
    except Exception:  # missing or damaged: not the same
        same = False
    if "--check" in argv:
        if not same:
            print(
                f"scenarios/{FILE_NAME}: not what the scenario files parse to; run `make generated`"
            )
        return 0 if same else 1
    if not same:
        target.write_bytes(made)
        print(f"wrote scenarios/{FILE_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
