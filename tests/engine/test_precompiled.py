"""The store's SQL compiled ahead of time: what the expressions compile to, and all a run
needs, so a run never loads SQLAlchemy or SQLModel."""

import dataclasses
import json
from pathlib import Path

import pytest

from core.engine import precompile, precompiled, prepared
from core.engine.backends import sqlite
from core.engine.batch_statements import batch_statements_for
from core.engine.policies import Policy
from core.engine.sql_text import precompiled_batch, precompiled_statements
from core.engine.statements import statements_for
from tests.simkit import modules_loaded_by

ROOT = Path(__file__).resolve().parents[2]


def test_the_files_are_what_the_statements_compile_to_now() -> None:
    assert precompile.main(["--check"]) == 0


@pytest.mark.parametrize("policy", precompile.every_policy(), ids=repr)
def test_every_policy_is_served_from_the_files_as_compiled(policy: Policy) -> None:
    assert precompiled_statements("sqlite", policy) == statements_for(sqlite.dialect(), policy)
    assert precompiled_batch("sqlite", policy) == batch_statements_for(sqlite.dialect(), policy)
    for dialect in precompile.DIALECTS:
        assert precompiled_statements(dialect, policy) is not None
        assert precompiled_batch(dialect, policy) is not None


def test_a_policy_is_named_by_every_switch_it_has() -> None:
    assert tuple(f.name for f in dataclasses.fields(Policy)) == precompiled.POLICY_SWITCHES


@pytest.mark.parametrize(
    "content",
    [
        "[]",
        '{"schema_version": 2}',
        '{"schema_version": 2, "texts": [], "statements": {"11111": {"now": 7}}}',
    ],
)
def test_a_file_of_another_shape_is_compiled_instead(
    content: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "compiled.sqlite.json"
    bad.write_text(content, encoding="utf-8")
    monkeypatch.setattr(precompiled, "path_for", lambda _dialect: bad)
    precompiled._read.cache_clear()
    try:
        assert precompiled.texts("sqlite", "statements", "11111") is None
        assert precompiled.ddl("sqlite") is None
    finally:
        precompiled._read.cache_clear()


def test_the_ddl_is_the_tables_compiled() -> None:
    assert precompiled.ddl("sqlite") == sqlite.compiled_ddl()


def test_a_file_from_other_fields_is_not_used_and_the_store_compiles_instead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = Policy(idempotency=False)
    found = precompiled.texts("sqlite", "statements", "11101")
    assert found is not None
    found.pop("heartbeat")
    monkeypatch.setattr(precompiled, "texts", lambda *_args: found)
    monkeypatch.setattr(prepared, "_STATEMENTS", {})
    assert precompiled_statements("sqlite", policy) is None
    assert prepared.store_statements("sqlite", policy) == statements_for(sqlite.dialect(), policy)


def test_a_missing_or_unreadable_file_is_compiled_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "compiled.sqlite.json"
    bad.write_text("{", encoding="utf-8")
    monkeypatch.setattr(precompiled, "path_for", lambda _dialect: bad)
    precompiled._read.cache_clear()
    try:
        assert precompiled.ddl("sqlite") is None
        bad.write_text(json.dumps({"schema_version": precompiled.SCHEMA_VERSION + 1}))
        precompiled._read.cache_clear()
        assert precompiled.texts("sqlite", "statements", "11111") is None
    finally:
        precompiled._read.cache_clear()


OPEN_A_RUN = """
from core.engine.modes import Mode
from core.scenarios.library import open_scenario
from core.scenarios.session import Session
session = Session(open_scenario("02_fire_midnight_return"), lang="en")
for mode in (Mode.CORRECT, Mode.NO_FENCING, Mode.SEED_SQL):
    session.set_mode(mode)
    while session.next_step() is not None:
        session.snapshot()
session.close()
"""


def test_a_run_opens_plays_and_reads_its_snapshot_without_sqlalchemy() -> None:
    loaded = modules_loaded_by(OPEN_A_RUN)
    assert [m for m in loaded if m.startswith(("sqlalchemy", "sqlmodel"))] == []
