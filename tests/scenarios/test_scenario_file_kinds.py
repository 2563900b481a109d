"""A scenario path that is not a regular file is one line at once: no hang, no endless read.

`check`, `play`, the app and `serve` all read a scenario through one function; these call
the commands, which must answer in one line with exit 2 whatever the path names.
"""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.scenarios.format.model import MAX_FILE_BYTES
from demo.cli import main

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 20.0  # a deadline for a command that should answer at once, never a pause


def _answer(args: list[str], fifo: Path | None = None) -> int:
    """The command's exit status; a command still blocked at the deadline is a failure
    (and is let go by opening the FIFO's other end, so that the test run ends)."""
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(main(args)), daemon=True)
    thread.start()
    thread.join(WAIT_S)
    if thread.is_alive() and fifo is not None:
        with fifo.open("wb"):
            pass
        thread.join(WAIT_S)
        pytest.fail(f"{args[0]} waited on the FIFO")
    assert codes, f"{args[0]} did not answer"
    return codes[0]


@pytest.mark.parametrize("command", ["check", "play"])
def test_a_fifo_is_refused_without_waiting_for_a_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    fifo = tmp_path / "scenario.toml"
    os.mkfifo(fifo)
    assert _answer([command, str(fifo)], fifo) == 2
    err = capsys.readouterr().err
    assert err == f"{fifo}: cannot read: it is a named pipe (FIFO), not a regular file\n"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_is_refused_without_reading_it(
    capsys: pytest.CaptureFixture[str], device: str
) -> None:
    assert _answer(["check", device]) == 2
    err = capsys.readouterr().err
    assert err == f"{device}: cannot read: it is a character device, not a regular file\n"


# Run apart, under a memory cap: a reader that trusts `st_size` (0 for a device) reads
# /dev/zero until the cap stops it, instead of until the machine does.
ENDLESS = """
import resource, sys
cap = 512 * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from demo.cli import main
sys.exit(main(["check", sys.argv[1]]))
"""


def test_an_endless_file_is_never_read_past_the_limit() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ENDLESS, "/dev/zero"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S * 3,
    )
    assert done.returncode == 2, done.stderr[-300:]
    assert done.stderr == "/dev/zero: cannot read: it is a character device, not a regular file\n"


def test_a_regular_file_is_read_at_most_one_byte_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(b"# x\n" * MAX_FILE_BYTES)
    real_read = os.read
    asked: list[int] = []

    def counted(fd: int, n: int) -> bytes:
        asked.append(n)
        return real_read(fd, n)

    monkeypatch.setattr("os.read", counted)
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"{path}: file too large")
    assert 0 < sum(asked) <= MAX_FILE_BYTES + 1
