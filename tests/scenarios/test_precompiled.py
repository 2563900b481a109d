"""The bundled scenarios parsed ahead of time: each what its file parses to now, used only for
exactly the bytes it was parsed from, so a run opens without the format's pydantic models."""

import hashlib
import os
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.scenarios import precompiled
from core.scenarios.format import parse_scenario
from core.scenarios.library import bundled_files, open_scenario
from tests.simkit import modules_loaded_by

ROOT = Path(__file__).resolve().parents[2]
NAMES = [f.name for f in bundled_files()]


def test_the_file_is_what_the_scenario_files_parse_to_now() -> None:
    assert precompiled.main(["--check"]) == 0


@pytest.mark.parametrize("name", NAMES)
def test_each_bundled_scenario_comes_back_as_its_file_parses(name: str) -> None:
    data = (ROOT / "scenarios" / name).read_bytes()
    parsed = parse_scenario(data, precompiled.label(name))
    assert precompiled.bundled(name, data) == parsed
    assert open_scenario(name) == parsed


def test_a_bundled_file_changed_since_is_parsed_again(tmp_path: Path) -> None:
    name = "01_fog.toml"
    changed = (ROOT / "scenarios" / name).read_bytes().replace(b"title = ", b"title  = ", 1)
    assert precompiled.bundled(name, changed) is None
    assert precompiled.bundled("nonesuch.toml", changed) is None


def _with_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    (tmp_path / precompiled.FILE_NAME).write_bytes(data)
    monkeypatch.setattr(precompiled, "_folder", lambda: tmp_path)
    precompiled._entries.cache_clear()


@pytest.fixture(autouse=True)
def _read_again() -> Iterator[None]:
    yield
    precompiled._entries.cache_clear()


FOG = (ROOT / "scenarios" / "01_fog.toml").read_bytes()


def test_a_damaged_file_is_not_read_and_the_toml_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_file(tmp_path, monkeypatch, b"not a pickle")
    assert precompiled.bundled("01_fog.toml", FOG) is None
    assert open_scenario("01_fog") == parse_scenario(FOG, "scenarios/01_fog.toml")


def test_an_entry_whose_pickle_changed_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = pickle.loads(precompiled.build(ROOT / "scenarios"))
    text_hash, payload, payload_hash = made["scenarios"]["01_fog.toml"]
    # the same tree with one word changed: it unpickles, but not to what the file says
    changed = payload.replace(b"floor6", b"floor9", 1)
    assert changed != payload
    made["scenarios"]["01_fog.toml"] = (text_hash, changed, payload_hash)
    _with_file(tmp_path, monkeypatch, pickle.dumps(made))
    assert precompiled.bundled("01_fog.toml", FOG) is None


class _Touches:
    """Pickled, it runs `touch PATH` when read by a plain unpickler."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.path}",))


def test_a_pickle_that_would_run_code_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    payload = pickle.dumps(_Touches(marker))
    digest = hashlib.sha256(payload).hexdigest()
    made = {"version": precompiled.VERSION, "scenarios": {}}
    made["scenarios"]["01_fog.toml"] = (hashlib.sha256(FOG).hexdigest(), payload, digest)
    _with_file(tmp_path, monkeypatch, pickle.dumps(made))
    assert precompiled.bundled("01_fog.toml", FOG) is None
    # and a file that is itself such a pickle is not read at all
    _with_file(tmp_path, monkeypatch, payload)
    assert precompiled.bundled("01_fog.toml", FOG) is None
    assert not marker.exists()


OPEN_A_RUN = """
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
session = Session(open_scenario("01_fog"), lang="en")
while session.next_step() is not None:
    session.snapshot()
session.close()
"""


def test_a_bundled_run_opens_and_plays_without_pydantic_or_sqlalchemy() -> None:
    loaded = modules_loaded_by(OPEN_A_RUN)
    heavy = ("pydantic", "sqlalchemy", "sqlmodel", "core.scenarios.format.schema")
    assert [m for m in loaded if m.startswith(heavy)] == []
