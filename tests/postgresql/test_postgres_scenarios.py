"""Every bundled scenario gives the same answers on PostgreSQL as on SQLite, byte for byte."""

from pathlib import Path

import psycopg
import pytest

from core.engine.backends import postgresql as backend
from core.scenarios import library
from core.tools.cli import main

BUNDLED = [f.name.removesuffix(".toml") for f in library.bundled_files()]


@pytest.fixture
def scratch_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scratch schemas this test's runs make (other xdist workers make theirs too)."""
    made: list[str] = []
    name = backend.scratch_schema_name

    def recorded() -> str:
        made.append(name())
        return made[-1]

    monkeypatch.setattr(backend, "scratch_schema_name", recorded)
    return made


def _left_behind(url: str, names: list[str]) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s)", (names,)
        ).fetchall()
    return [name for (name,) in rows]


@pytest.mark.parametrize("name", BUNDLED)
def test_a_scenario_plays_identically_on_both_backends(
    name: str, postgres_url: str, capsys: pytest.CaptureFixture[str], scratch_made: list[str]
) -> None:
    assert main(["play", name, "--json"]) == 0
    on_sqlite = capsys.readouterr().out
    assert main(["play", name, "--json", "--db", postgres_url]) == 0
    on_postgresql = capsys.readouterr().out
    assert on_postgresql == on_sqlite
    assert on_sqlite.count("\n") > 10
    # The run had a schema of its own, and it is gone with the run.
    assert len(scratch_made) == 1
    assert _left_behind(postgres_url, scratch_made) == []


def test_the_readable_transcript_is_the_same_too(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["play", "14_sandbox", "--lang", "zh"])
    on_sqlite = capsys.readouterr().out
    main(["play", "14_sandbox", "--lang", "zh", "--db", postgres_url])
    assert capsys.readouterr().out == on_sqlite


def test_an_unreachable_server_is_one_line_and_exit_2(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql://nobody@/postgres?host=/nonexistent-socket-dir&connect_timeout=2"
    assert main(["play", "01_fog", "--db", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot connect" in err


def _chaos_summary(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    import json

    assert main(["chaos", "--runs", "4", "--seed", "11", "--json", *extra]) == 0
    doc = json.loads(capsys.readouterr().out)
    doc.pop("elapsed_s")
    return dict(doc)


def test_chaos_runs_find_the_same_on_postgresql(
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    scratch_made: list[str],
) -> None:
    out = ["--out", str(tmp_path)]
    on_sqlite = _chaos_summary(capsys, *out)
    assert _chaos_summary(capsys, *out, "--db", postgres_url) == on_sqlite
    assert len(scratch_made) >= 4
    assert _left_behind(postgres_url, scratch_made) == []


def test_chaos_refuses_one_sqlite_file_for_many_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chaos", "--runs", "2", "--db", str(tmp_path / "x.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "each run needs a store of its own" in err
    assert not (tmp_path / "x.db").exists()


def test_the_app_refuses_an_unreachable_database_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from demo.cli import main as app_main

    url = "postgresql://nobody@/postgres?host=/nonexistent-socket-dir&connect_timeout=2"
    assert app_main(["tui", "--db", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot connect" in err
