"""Play every bundled scenario in every mode, as `borrowed-keys play NAME --json`, into a folder.

A move that must not change behaviour is checked by playing before and after it and comparing
the two folders byte for byte (`python devtools/play_all.py OUT` twice, then `diff -r`).
The mode is a scenario file's own top-level `mode` key, so each scenario is written once per
mode into a temporary file with that key set.
"""

import contextlib
import io
import re
import sys
import tempfile
from pathlib import Path

from core.engine.modes import Mode
from core.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
MODE_LINE = re.compile(r"^mode\s*=.*$", re.MULTILINE)


def with_mode(text: str, mode: Mode) -> str:
    """The scenario's text with its top-level mode set to `mode` (the key before any table)."""
    text = MODE_LINE.sub("", text, count=1)
    return f'mode = "{mode.value}"\n' + text


def play_one(path: Path, lang: str = "en") -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["play", str(path), "--json", "--lang", lang])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return f"exit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}"


def run(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in sorted((ROOT / "scenarios").glob("*.toml")):
            text = scenario.read_text(encoding="utf-8")
            # As bundled, by name, the way a user plays it.
            for lang in ("en", "zh"):
                body = play_one(scenario, lang)
                (out_dir / f"{scenario.stem}.bundled.{lang}.txt").write_text(body, encoding="utf-8")
                count += 1
            for mode in Mode:
                path = Path(tmp) / scenario.parent.name / f"{scenario.stem}.toml"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(with_mode(text, mode), encoding="utf-8")
                body = play_one(path).replace(str(path), scenario.name)
                (out_dir / f"{scenario.stem}.{mode.value}.txt").write_text(body, encoding="utf-8")
                count += 1
    print(f"{count} plays written to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
