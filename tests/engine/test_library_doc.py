"""docs/library.md: its example runs as it stands and prints what the page says it prints."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "library.md"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    runnable = [b for b in blocks if "asyncio.run(" in b]
    assert len(runnable) == 1, "the page has one example that runs"
    return str(runnable[0])


def test_the_example_is_about_thirty_lines() -> None:
    assert 25 <= len(_example().strip().splitlines()) <= 40


def test_the_example_runs_and_says_what_the_page_says() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _example()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "hand this to downstream writes: 1",
        "the task is done",
    ]
