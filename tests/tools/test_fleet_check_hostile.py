"""`fleet --check` and `export` read a saved run as untrusted input.

A saved run is a file anyone can edit or point anywhere. Each case below was once read as
it was: a symlink to /dev/zero took 19 GB, a FIFO hung the check, an id holding an escape
sequence cleared the screen, deep nesting or `1e400` gave a traceback, and an edited
history (accepted writes deleted, a second verdict, a repeated seq) was judged held.
"""

import argparse
import json
import os
import re
from pathlib import Path

import pytest

from core.fleet.command import run_check_command
from core.fleet.history import HistoryError, load_history
from demo.export.cli import main as export_main

RECORDED = Path(__file__).parent.parent / "fleet_runs" / "stalled_run.jsonl"


def _args(path: Path, lang: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(check=str(path), lang=lang)


def _lines() -> list[dict[str, object]]:
    return [json.loads(raw) for raw in RECORDED.read_text().splitlines()]


def _write(tmp_path: Path, lines: list[dict[str, object]] | list[str]) -> Path:
    out = tmp_path / "edited.jsonl"
    out.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return out


def _refused(path: Path, capsys: pytest.CaptureFixture[str], said: str) -> str:
    """The check and the export each refuse `path` in one line, exit 2, `said` in it."""
    assert run_check_command(_args(path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(said, err), err
    assert "\x1b" not in err and "\u202e" not in err
    assert export_main([str(path), "--out", str(path.parent / "page")]) == 2
    err2 = capsys.readouterr().err
    assert err2.count("\n") == 1 and re.search(said, err2), err2
    return err


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_file_that_is_not_regular_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    link = tmp_path / "run.jsonl"
    if target == "fifo":
        os.mkfifo(link)
    else:
        link.symlink_to(target)
    _refused(link, capsys, r"run\.jsonl: .*not a regular file")


def _edited_event(n: int, **change: object) -> list[dict[str, object]]:
    lines = _lines()
    events = [x for x in lines if "seq" in x]
    events[n].update(change)
    return lines


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"worker": "w1\u001b[2J\u001b]0;pwned\u0007"}, r":2: .*escape character"),
        ({"worker": "w1\u202eevil"}, r":2: .*not printable \(U\+202E\)"),
        ({"at": -(10**15)}, r":2: .*'at' is -1000000000000000, outside"),
        ({"seq": "2"}, r":2: .*'seq' is not a whole number"),
        ({"lease_token": True}, r":2: .*'lease_token' is not a whole number"),
        ({"event": "bogus"}, r":2: .*unknown kind 'bogus'"),
    ],
)
def test_a_bad_value_in_an_event_is_one_line_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object], said: str
) -> None:
    _refused(_write(tmp_path, _edited_event(1, **change)), capsys, said)


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("[" * 100_000, r":1: .*nested more than 16 levels"),
        ('{"a": ' * 20 + "1" + "}" * 20, r":1: .*nested more than 16 levels"),
        ('{"seq": 1, "at": 1e400}', r":1: .*too large to be one"),
        ('{"seq": 1, "at": NaN}', r":1: .*NaN, which is not a number"),
        ("\xff\xfe", r":1: .*not JSON|:1: .*UTF-8"),
    ],
)
def test_a_line_that_is_no_bounded_json_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: str, said: str
) -> None:
    path = tmp_path / "edited.jsonl"
    path.write_bytes(raw.encode("utf-8", "surrogateescape") + b"\n")
    _refused(path, capsys, said)


@pytest.mark.parametrize("v", ["1", True, 9, None])
def test_a_version_it_does_not_know_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], v: object
) -> None:
    lines = _lines()
    n = next(i for i, x in enumerate(lines) if x.get("t") == "row")
    lines[n]["v"] = v
    _refused(_write(tmp_path, lines), capsys, rf":{n + 1}: .*version")


def test_a_newer_rows_version_on_the_verdict_line_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines()
    lines[-1]["rows"] = 2
    _refused(_write(tmp_path, lines), capsys, rf":{len(lines)}: .*rows of version 2, newer")


def test_the_files_own_name_is_shown_safely(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a\x1b[2Jb.jsonl"
    path.write_text("[1]\n")
    assert run_check_command(_args(path)) == 2
    assert "\x1b" not in capsys.readouterr().err


def _check(path: Path, capsys: pytest.CaptureFixture[str], lang: str | None = None) -> str:
    assert run_check_command(_args(path, lang)) == 1
    return capsys.readouterr().out


def test_deleted_accepted_writes_turn_held_red_and_say_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [x for x in _lines() if x.get("event") != "write_accepted"]
    lines[-1]["verdict"] = "held"
    out = _check(_write(tmp_path, lines), capsys)
    assert "Verdict: broken" in out
    assert "the ledger's row t1/1 has no accepted write in the history" in out
    assert "seq 7 is missing from the history" in out
    assert "the verdict line counts 18 events and the file holds 14" in out
    assert "was another (held, checked again broken)" in out
    zh = _check(_write(tmp_path, lines), capsys, "zh")
    assert "历史解释不了存储最后的各行" in zh and "历史有缺口" in zh


def test_accepted_writes_relabelled_refused_are_red(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines()
    for x in lines:
        if x.get("event") == "write_accepted":
            x.update(event="write_rejected", reason="fenced")
    out = _check(_write(tmp_path, lines), capsys)
    assert "the ledger's row t1/4 has no accepted write in the history" in out


def test_a_ledger_row_unlike_its_last_accepted_write_is_red(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines()
    row = next(x for x in lines if x.get("table") == "ledger")
    row["row"]["writer"] = "w1"  # type: ignore[index]
    out = _check(_write(tmp_path, lines), capsys)
    assert "the ledger's row t1/1 is w1's with fence 2; its last accepted write" in out


def test_a_second_verdict_a_line_after_it_and_a_repeated_seq_are_red(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines()
    event = dict(next(x for x in lines if x.get("seq") == 18))
    out = _check(_write(tmp_path, [*lines, event]), capsys)
    assert f"line {len(lines) + 1} comes after the verdict line {len(lines)}" in out
    out = _check(_write(tmp_path, [*lines, lines[-1]]), capsys)
    assert "is a second verdict line" in out
    repeated = [*lines[:18], dict(lines[17]), *lines[18:]]
    repeated[-1]["events"] = 19
    out = _check(_write(tmp_path, repeated), capsys)
    assert "seq 18 comes after seq 18: repeated or out of order" in out


def test_the_recorded_run_still_holds(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_check_command(_args(RECORDED)) == 0
    assert not load_history(RECORDED).problems


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match=r"nothing\.jsonl: cannot be read: No such file"):
        load_history(tmp_path / "nothing.jsonl")
