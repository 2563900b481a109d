"""`borrowed-keys approve TASK --db ...` names a store that must be there already: a mistyped
path is one line and exit 2, and no empty store is left behind where it pointed."""

from pathlib import Path

import pytest

from core.tools.agent_cli import main


@pytest.mark.parametrize("form", ["{}", "sqlite:///{}"])
def test_approve_on_a_database_that_is_not_there_makes_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    missing = tmp_path / "keys.db"
    assert main(["approve", "t1", "--db", form.format(missing)]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "no such database" in said[0], said
    assert list(tmp_path.iterdir()) == []
