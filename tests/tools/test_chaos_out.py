"""`chaos --out`: a folder that cannot be written is one line at once; none is made for
nothing."""

from pathlib import Path

import pytest

from core.tools.cli import main as cli_main


def test_no_folder_is_made_when_nothing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_main(["chaos", "--runs", "3", "--json"]) == 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["under-a-file", "pseudo-filesystem"])
def test_an_out_folder_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    if where == "under-a-file":
        (tmp_path / "notes.txt").write_text("mine\n")
        out = tmp_path / "notes.txt" / "repros"
    else:
        out = Path("/proc/borrowed-keys-chaos")  # no one may make a folder here, not root
    code = cli_main(["chaos", "--runs", "2", "--mode", "seed_sql", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"borrowed-keys chaos: --out {out}:"), err
    assert "Traceback" not in err
    assert not out.exists()
