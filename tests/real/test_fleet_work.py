"""`borrowed-keys fleet --headless --work ...`: agent workers under the lease library, the
fenced service started by the fleet, faults, and a verdict that names the service's rules."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.agents.browser import missing_browser

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _fleet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "demo.cli", "fleet", "--headless", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )


def test_tools_work_under_kills_holds_the_store_and_the_service_books(tmp_path: Path) -> None:
    saved = tmp_path / "run.jsonl"
    done = _fleet(
        *("--work", "tools", "--workers", "2", "--tasks", "3", "--steps", "2", "--ttl", "1s"),
        *("--seconds", "40", "--faults", "kill", "--seed", "5", "--save", str(saved)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "Killed Acheng" in out or "Killed Linzhou" in out
    assert "3 tasks completed" in out
    assert "judged by its rules: no_stale_write, no_charge_twice." in out
    assert "The service's rules held." in out
    books = json.loads((tmp_path / "run.jsonl.downstream.json").read_text(encoding="utf-8"))
    memos = sorted((c["task"], c["memo"]) for c in books["charges"])
    assert memos == sorted({(c["task"], c["memo"]) for c in books["charges"]})  # none twice
    assert {t for t, _m in memos} == {"t1", "t2", "t3"}
    assert {h["verdict"] for h in books["history"]} <= {"charged", "replayed", "accepted"}
    # the saved run keeps the service's books too, and the check judges them again
    again = subprocess.run(
        [sys.executable, "-m", "demo.cli", "fleet", "--check", str(saved)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"The downstream service's books ({len(books['history'])} requests)" in again.stdout
    assert again.stdout.rstrip().endswith("The service's rules held.")


def test_the_service_verdict_speaks_chinese() -> None:
    done = _fleet(
        *("--work", "approval", "--workers", "1", "--tasks", "1", "--ttl", "1s"),
        *("--seconds", "20", "--faults", "none", "--lang", "zh"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "下游服务自己的账本" in done.stdout
    assert done.stdout.rstrip().endswith("下游服务的规则全部成立。")


def test_a_bad_work_is_one_line() -> None:
    done = _fleet("--work", "painting")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "--work" in done.stderr


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
def test_browser_work_under_random_faults_names_the_service_rules() -> None:
    done = _fleet(
        *("--work", "browser", "--workers", "2", "--tasks", "2", "--ttl", "3s"),
        *("--seconds", "60", "--faults", "random", "--seed", "2"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "judged by its rules: no_stale_write, no_charge_twice." in done.stdout
    assert "The service's rules held." in done.stdout


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
def test_mixed_work_runs_the_three_uses_side_by_side_under_freezes(tmp_path: Path) -> None:
    saved = tmp_path / "run.jsonl"
    done = _fleet(
        *("--work", "mixed", "--workers", "2", "--tasks", "3", "--steps", "2", "--ttl", "2s"),
        *("--seconds", "60", "--faults", "freeze", "--seed", "3", "--save", str(saved)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Froze the heartbeat of" in done.stdout
    assert "The service's rules held." in done.stdout
    books = json.loads((tmp_path / "run.jsonl.downstream.json").read_text(encoding="utf-8"))
    # t1 tools (its charges and result), t2 approval (parked: nothing sent), t3 browser
    assert {c["task"] for c in books["charges"]} == {"t1"}
    written = {h["key"] for h in books["history"] if h["verdict"] == "accepted"}
    assert {"t1/result", "t3/form"} <= written


def test_tools_work_without_idempotency_turns_red_in_the_service_books(tmp_path: Path) -> None:
    """The seed's fifth part missing ("Idempotency Key 让重放调用不炸副作用"): the worker sends
    no key, and a redo after a kill charges again. One worker holds one long task (three
    one-second steps) for the whole run and is killed every lease length or so, so some kill
    lands between a charge and its checkpoint (nearly all of a step is that gap: the charge
    is made, then its answer is read for a second). The lease store's judge sees no harm:
    the charge is the service's, and only its own books show it twice."""
    saved = tmp_path / "run.jsonl"
    done = _fleet(
        *("--work", "tools", "--mode", "no_idempotency", "--workers", "1", "--tasks", "1"),
        *("--steps", "3", "--step-time", "1s", "--ttl", "1s", "--seconds", "8"),
        *("--faults", "kill", "--seed", "1", "--save", str(saved)),
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "Killed Acheng" in out
    assert "Verdict: held." in out  # the store's own rules: not where this harm shows
    assert re.search(r"t1 was charged \d+ times for call-\d", out), out
    assert re.search(r"The service's rules were broken \d+ times\.", out), out
    books = json.loads((tmp_path / "run.jsonl.downstream.json").read_text(encoding="utf-8"))
    memos = [(c["task"], c["memo"]) for c in books["charges"]]
    assert len(memos) > len(set(memos))
    assert all(c["idempotency_key"] is None for c in books["charges"])
    # the saved run keeps the second charge, and the check finds it again
    again = subprocess.run(
        [sys.executable, "-m", "demo.cli", "fleet", "--check", str(saved)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 1, again.stdout + again.stderr
    assert "The service's rules were broken" in again.stdout
