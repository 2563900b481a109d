"""`borrowed-keys fleet --headless --work ...`: agent workers under the lease library, the
fenced service started by the fleet, faults, and a verdict that names the service's rules."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.agents.browser import missing_browser
from core.downstream.books import ServiceRule, judge
from core.downstream.thread import ServiceThread
from core.engine.modes import Mode
from core.fleet.frame import FrameMaker
from core.fleet.supervisor import Fleet, FleetSettings

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0  # a bound only a hung run reaches: each wait is on what a process says


def _cli(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 170
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "demo.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _fleet(*args: str) -> subprocess.CompletedProcess[str]:
    return _cli("fleet", "--headless", *args)


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
    again = _cli("fleet", "--check", str(saved), timeout=60)
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


@pytest.mark.parametrize("work", ["browser", "mixed"])
def test_browser_work_without_a_browser_is_refused_in_one_line_before_any_worker(
    tmp_path: Path, work: str
) -> None:
    """Without chromium the fleet says why and starts nothing: each worker would have said
    it and exited, and the run ended with no task done under a verdict that held."""
    hidden = {
        "PATH": str(tmp_path),  # no chromium on it
        "BK_CHROMIUM": str(tmp_path / "no-chromium"),
        "PYTHONPATH": str(ROOT),
    }
    done = _cli("fleet", "--headless", "--work", work, cwd=tmp_path, env=hidden, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and "chromium" in said[0] and f"--work {work}" in said[0], said
    assert "Started" not in done.stdout and list(tmp_path.iterdir()) == []


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
    again = _cli("fleet", "--check", str(saved), timeout=60)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "The service's rules were broken" in again.stdout


# A stall under agent work, made certain: the worker is stopped with its result's write on
# its way out, and continued once the other worker has finished the task, so the write
# lands after the newer one ("所有下游写入都必须携带这个 token；存储层或状态机只接受当前最大的
# token"). A fixed seed and short tasks (two 300 ms steps in a 2 s lease) so every stall
# finds a write within its lease length.
_STALLED = (
    *("--work", "tools", "--workers", "2", "--ttl", "2s", "--steps", "2"),
    *("--step-time", "300ms", "--seconds", "10", "--faults", "stall", "--seed", "1"),
)


def test_a_stalled_agent_without_fencing_lands_its_write_late_and_the_service_takes_it() -> None:
    done = _fleet(*_STALLED, "--mode", "no_fencing")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    stalled = re.search(
        r"Stalled (\w+) \(pid \d+\) holding (t\d+) with SIGSTOP, its write to (t\d+)/result "
        r"with fence token (\d+) on its way out\.",
        out,
    )
    assert stalled is not None, out
    task, token = stalled[2], stalled[4]
    assert stalled[3] == task
    assert f"Resumed {stalled[1]} with SIGCONT: its held write goes now, late" in out
    # the service's own rule names the harm; the store's books saw nothing to refuse
    late = re.search(
        rf"the service took a write to {task}/result with fence token {token} after it had "
        r"seen (\d+)",
        out,
    )
    assert late is not None and int(late[1]) > int(token), out
    assert re.search(r"The service's rules were broken \d+ times\.", out), out


def test_a_stalled_agent_with_fencing_has_its_late_write_refused(tmp_path: Path) -> None:
    saved = tmp_path / "run.jsonl"
    done = _fleet(*_STALLED, "--save", str(saved))
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    stalled = re.search(r"Stalled (\w+) .* its write to (t\d+)/result with fence token (\d+)", out)
    assert stalled is not None, out
    assert "The service's rules held." in out
    books = json.loads((tmp_path / "run.jsonl.downstream.json").read_text(encoding="utf-8"))
    key, token = f"{stalled[2]}/result", int(stalled[3])
    writes = [h for h in books["history"] if h["endpoint"] == "artifact" and h["key"] == key]
    # the newer holder's write first, then the stopped one's, late, refused by the fence
    assert [h["verdict"] for h in writes] == ["accepted", "stale_token"], writes
    assert writes[0]["token"] > token == writes[1]["token"]
    assert writes[1]["detail"]["writer"] == stalled[1].lower()
    refused = writes[1]["detail"]["message"]
    assert f"fence token {token} is older than {writes[0]['token']}" in refused


def _held_write(line: dict[str, object]) -> bool:
    return line.get("line") == "write_answered"


_NO_BROWSER = pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))


@pytest.mark.parametrize("work", ["tools", "approval", pytest.param("browser", marks=_NO_BROWSER)])
@pytest.mark.parametrize("mode", [Mode.CORRECT, Mode.NO_FENCING])
def test_the_fleets_stall_stops_an_agent_with_its_write_and_resume_sends_it_late(
    tmp_path: Path, mode: Mode, work: str
) -> None:
    """`Fleet.stall` on a tools worker (or an approval worker once the task is approved):
    it waits for the worker's write to be held, freezes its renewals, stops it; another
    worker takes the task over and finishes it; `resume` sends the held write with the old
    token. The fenced service refuses it; the unfenced one (no_fencing) takes it, and its
    books' judge names the stale write."""
    fenced = mode is Mode.CORRECT
    key = {"tools": "t1/result", "approval": "t1/sent", "browser": "t1/form"}[work]
    service = ServiceThread(tmp_path / "downstream.db", fencing=fenced)
    settings = FleetSettings(
        db=str(tmp_path / "fleet.db"),
        # a browser walk (its chromium started, five pages, then the form) reaches its
        # submit within a lease length, as the stall waits for it
        ttl_ms=6000 if work == "browser" else 1500,
        poll_ms=150,
        steps=1,
        step_ms=100 if work == "browser" else 200,
        mode=mode,
        work=work,
        service_url=service.url,
    )
    fleet = Fleet(settings, tmp_path / "logs")
    fleet.downstream = service
    maker = FrameMaker(fleet)  # the app's, from the fleet's start: it draws Belief vs truth
    try:
        fleet.enqueue(1)
        w1 = fleet.add_worker("w1")
        assert w1.wait_for(lambda line: line.get("line") == "claimed", WAIT_S) is not None
        maker.frame()
        if work == "approval":
            # "租约自然释放；审批信号到来后重新 claim": it drafts and parks; approved, it
            # claims again under a fresh token and sends the draft, which the stall holds
            parked = w1.wait_for(lambda line: line.get("line") == "parked", WAIT_S)
            assert parked is not None, w1.said()[-5:]
            fleet.decide("t1", approved=True)
        assert fleet.stall("w1")
        held = w1.write_held
        assert held is not None and held["key"] == key, w1.said()[-5:]
        assert fleet.holds_a_write("w1") and w1.stalled and w1.frozen
        maker.frame()
        view = next(v for v in FrameMaker(fleet).frame().snap.workers if v.id == "w1")
        assert view.write_held  # the pane says it was stopped with its write in hand
        assert not fleet.taken_over("t1")
        w2 = fleet.add_worker("w2")
        finished = w2.wait_for(
            lambda line: line.get("line") == "finished" and line.get("task") == "t1", WAIT_S
        )
        assert finished is not None, w2.said()[-5:]
        assert finished["token"] > held["token"]
        assert fleet.taken_over("t1")
        mark = w1.said_count
        assert fleet.resume("w1")
        answered = w1.wait_for(_held_write, WAIT_S, since=mark)
        assert answered is not None, w1.said()[-5:]
        assert not fleet.holds_a_write("w1")
        books = service.books()
        late = [h for h in books["history"] if h["key"] == key][-1]
        assert (late["token"], late["detail"]["writer"]) == (held["token"], "w1")
        found = judge(books["history"], books["charges"])
        # Belief vs truth, as the fleet app draws it: w1 believed the lease it was stopped
        # with after the store's had ended (the takeover came in between)
        timeline = maker.frame().snap.timeline
        row = timeline.row("w1") if timeline is not None else None
        assert row is not None and row.leases and row.beliefs, timeline
        store_end, belief_end = row.leases[-1].end, row.beliefs[-1].end
        assert store_end is not None and (belief_end is None or store_end < belief_end)
        if fenced:
            assert (answered["status"], answered["error"]) == (409, "stale_token")
            assert late["verdict"] == "stale_token" and found == []
        else:
            assert answered["status"] == 200 and late["verdict"] == "accepted"
            assert [f.rule for f in found] == [ServiceRule.NO_STALE_WRITE]
    finally:
        fleet.close()
