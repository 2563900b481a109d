"""A scenario's mistake said in the run's language by every command, the app's included."""

from pathlib import Path

import pytest

from demo.cli import main


@pytest.mark.parametrize("command", ["play", "check", "tui", "serve"])
def test_the_command_line_says_it_in_the_run_language(
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if command == "tui":
        # the app finds the mistake as its run opens (after its first frame), ends, and says
        # it once the terminal is back: run headless here, there is no terminal
        from textual.app import App

        from demo.app import BorrowedKeysApp

        monkeypatch.setattr(BorrowedKeysApp, "run", lambda self: App.run(self, headless=True))
    path = tmp_path / "bad.toml"
    path.write_text('title = "t"\nlease_ttl = "abc"\n', encoding="utf-8")
    for lang, words in (("zh", "时长 'abc' 写不对"), ("en", "bad duration 'abc'")):
        argv = [command, str(path), "--lang", lang]
        assert main(argv) == 2
        _out, err = capsys.readouterr()
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert f"{path}:2: lease_ttl" in lines[0]
        assert words in lines[0]
        assert "Traceback" not in err
