"""The player: check_expectation on hand-built snapshots, and playing through the real facade."""

from pathlib import Path

import pytest

from core.engine.records import EffectRow, LedgerRow, TaskRow
from core.scenarios.format import Expectation, ScenarioError, load_scenario, parse_scenario
from core.scenarios.player import PlayResult, check_expectation, play, render_line
from core.scenarios.session import Session
from core.sim.snapshot import Metrics, Rejection, Snapshot, TaskView, WorkerView

HERE = Path(__file__).parents[1]


def task_row(task_id: str = "t1", **kw: object) -> TaskRow:
    base: dict[str, object] = dict(
        task_id=task_id, kind="ledger", status="running", owner_id="b", attempt=2,
        max_attempts=5, lease_token=2, fence_token=2, lease_expires_at=90_000,
        renew_deadline=None, last_heartbeat_at=None, checkpoint_uri=None, input_payload=None,
        result=None, error_code=None, approved_at=None, updated_at=0,
    )  # fmt: skip
    base.update(kw)
    return TaskRow(**base)  # type: ignore[arg-type]


def rejection(reason: str, worker: str = "a", task: str = "t1") -> Rejection:
    return Rejection(1, 0, worker, task, "write", reason, 1, 1, 2, 2, "p1")


def snap(**kw: object) -> Snapshot:
    base: dict[str, object] = dict(
        now_ms=60_000,
        mode="correct",
        tasks=(TaskView(task_row(), 30_000, 3), TaskView(task_row("t2", status="queued",
               owner_id=None, attempt=0, lease_token=0, fence_token=0, lease_expires_at=None), None,
               None)),
        workers=(
            WorkerView("a", "frozen", True, "t1", 4, 1, 1, 5, -5, 70_000),
            WorkerView("b", "working", True, "t1", 4, 2, 2, 30_000, 30_000, 0),
            WorkerView("c", "idle", True, None, None, None, None, None, None, None),
        ),
        ledger=(LedgerRow("p1", "B's page", 2, "b", 50_000, "t1"),),
        checkpoints=(),
        effects=(EffectRow("charge", "t1", "charge", 2, {}, 0, 2),),
        rejections=(rejection("fenced"), rejection("expired", task="t1")),
        violations={"duplicate_effect": 1, "double_owner": 0},
        metrics=Metrics(wasted_steps=1, recovery_time_ms=65_000),
    )  # fmt: skip
    base.update(kw)
    return Snapshot(**base)  # type: ignore[arg-type]


SO_FAR = "expired 1, fenced 1"


def E(subject: str, name: str, /, **params: str | int) -> Expectation:
    return Expectation(subject, name, tuple(params.items()))


@pytest.mark.parametrize(
    ("exp", "ok", "found"),
    [
        (E("task", "t1", status="running", owner="b"), True, 'status = "running", owner = "b"'),
        (E("task", "t1", fence_token=1), False, "fence_token = 2"),
        (E("task", "t1", checkpoint_step=3, attempt=2), True, "checkpoint_step = 3, attempt = 2"),
        (E("task", "t2", owner="", checkpoint_step=0), True, 'owner = "", checkpoint_step = 0'),
        (E("task", "t9"), False, 'no task "t9"'),
        (E("task", "t1", expires_at=90_000), True, 'expires_at = "90s"'),
        (E("task", "t1", expires_at=80_000), False, 'expires_at = "90s"'),
        (E("task", "t2", expires_at=""), True, 'expires_at = ""'),
        (E("task", "t1", expires_at=""), False, 'expires_at = "90s"'),
        (E("worker", "a", state="frozen", holds="t1"), True, 'state = "frozen", holds = "t1"'),
        (E("worker", "c", holds=""), True, 'holds = ""'),
        (E("worker", "a", fence_token=1, lease_token=1), True, "fence_token = 1, lease_token = 1"),
        (E("worker", "c", fence_token=1), False, 'fence_token = ""'),
        (E("worker", "c", state="dead"), False, 'state = "idle"'),
        (E("ledger", "p1", value="B's page", writer="b", fence_token=2), True, None),
        (E("ledger", "p1", writer="a"), False, 'writer = "b"'),
        (E("ledger", "p9"), False, 'no page "p9" in the ledger'),
        (E("rejected", "fenced"), True, "count = 1"),
        (E("rejected", "any", worker="a", count=2), True, "count = 2"),
        (E("rejected", "any", worker="b"), False, "count = 0; all rejections so far: " + SO_FAR),
        (E("rejected", "superseded", count=0), True, "count = 0"),
        (E("rejected", "expired", task="t2"), False, None),
        (E("effect", "charge", applied=1), False, "applied = 2"),
        (E("effect", "charge"), True, "applied = 2"),
        (E("effect", "never", applied=0), True, "applied = 0"),
        (E("violation", "any", count=0), False, "count = 1 (duplicate_effect 1)"),
        (E("violation", "duplicate_effect"), True, "count = 1"),
        (E("violation", "double_owner", count=0), True, "count = 0"),
        (E("violation", "stuck_task"), False, "count = 0"),
        (E("metric", "wasted_steps", max=1), True, "wasted_steps = 1"),
        (E("metric", "wasted_steps", min=2), False, "wasted_steps = 1"),
        (E("metric", "recovery_time", max=60_000), False, 'recovery_time = "65s"'),
        (E("metric", "recovery_time", min=60_000, max=70_000), True, None),
    ],
)  # fmt: skip
def test_check_expectation(exp: Expectation, ok: bool, found: str | None) -> None:
    got_ok, got_found = check_expectation(exp, snap())
    assert got_ok is ok
    if found is not None:
        assert got_found == found


def records(path: Path, lang: str = "en") -> list[dict[str, object]]:
    return list(play(load_scenario(path), lang=lang))


def test_plays_through_the_real_simulation() -> None:
    result = PlayResult()
    recs = list(play(load_scenario(HERE / "scenarios_ok" / "fog.toml"), result=result))
    kinds = [r["type"] for r in recs]
    assert kinds[0] == "scenario" and kinds[-1] == "summary"
    assert kinds.count("step") == 3
    assert result.failed == 0 and result.passed == 4
    events = [r["event"] for r in recs if r["type"] == "event"]
    assert "claimed" in events and "lease_expired" in events
    assert recs[-1]["violations"] == {k: 0 for k in recs[-1]["violations"]}  # type: ignore[union-attr]


def test_a_failed_expectation_is_reported() -> None:
    text = (HERE / "scenarios_ok" / "manual.toml").read_text(encoding="utf-8")
    text = text.replace('{ task = "t1", owner = "a", lease_token = 1 }',
                        '{ task = "t1", owner = "b", lease_token = 1 }')  # fmt: skip
    result = PlayResult()
    recs = list(play(parse_scenario(text, "m.toml"), result=result))
    failed = [r for r in recs if r["type"] == "expect" and not r["ok"]]
    assert result.failed == 1 and result.exit_code == 1
    assert failed[0]["found"] == 'owner = "a", lease_token = 1'
    assert failed[0]["line"] == 22


def test_a_step_that_cannot_run_names_its_line() -> None:
    text = 'title = "t"\n[[workers]]\nid = "m"\nautopilot = false\n\n'
    text += '[[step]]\ndo = "heartbeat"\nworker = "m"\n'
    with pytest.raises(ScenarioError) as caught:
        list(play(parse_scenario(text, "h.toml")))
    assert str(caught.value).startswith("h.toml:7: step 1 cannot run: ")


def test_fake_facade_is_enough() -> None:
    class Fake:
        now_ms = 0

        def apply(self, action: object) -> None:
            self.now_ms += 1000

        def snapshot(self) -> Snapshot:
            return snap(now_ms=self.now_ms)

        def events(self, since_seq: int = 0) -> list:  # type: ignore[type-arg]
            return []

    s = parse_scenario(
        'title = "t"\n[[step]]\ndo = "advance"\nby = "1s"\n'
        'expect = [{ violation = "duplicate_effect", count = 1 }]\n',
        "f.toml",
    )
    recs = list(play(s, make_sim=lambda _settings: Fake()))
    report = recs[-1].pop("report")
    assert recs[-1] == {"type": "summary", "t": 1.0, "passed": 1, "failed": 0,
                        "violations": {"double_owner": 0, "duplicate_effect": 1},
                        "harm": None}  # fmt: skip
    # a count the checker gave without its register line is still named, with no proof
    assert report["anomalies"] == [{"name": "duplicate_effect", "proof": []}]


def test_transcript_lines_in_both_languages() -> None:
    # a register line is a sentence in the run's language, with the tokens that decided it
    event = {"type": "event", "t": 65.0, "event": "write_rejected", "task": "t1", "worker": "a"}
    event |= {"lease_token": 1, "fence_token": 1, "reason": "fenced"}
    event |= {"detail": {"key": "p1", "operation": "write", "current_fence_token": 2}}
    en = "".join(text for text, _ in render_line(event, "en"))
    zh = "".join(text for text, _ in render_line(event, "zh"))
    assert en == (
        "  0:01:05.000  a's page p1 for t1 is refused: fence token 1 is behind the current 2\n"
    )
    assert zh == "  0:01:05.000  a 写 p1 页（任务 1）被拒收：围栏令牌 1 落后于当前的 2\n"


def test_expires_at_is_read_and_written_as_a_duration() -> None:
    text = """
title = "t"
[[workers]]
id = "a"
[[tasks]]
id = "t1"
[[step]]
do = "advance"
by = "1s"
expect = [{ task = "t1", expires_at = "60s" }, { task = "t1", expires_at = "" }]
"""
    scenario = parse_scenario(text.encode(), "x.toml")
    first, second = scenario.steps[0].expects
    assert first.get("expires_at") == 60_000 and second.get("expires_at") == ""
    assert first.to_toml() == '{ task = "t1", expires_at = "60s" }'
    records = [r for r in play(scenario) if r["type"] == "expect"]
    assert [r["ok"] for r in records] == [True, False]
    with pytest.raises(ScenarioError, match="expires_at"):
        parse_scenario(text.replace('"60s"', '"soon"').encode(), "x.toml")


def test_every_subject_the_format_knows_has_one_check() -> None:
    from core.scenarios.expectations import _CHECKS
    from core.scenarios.format import EXPECT_SUBJECTS, Subject

    assert set(EXPECT_SUBJECTS) == set(Subject) == set(_CHECKS)


IGNORED_DECISION = """
title = "approve too early"
lease_ttl = "60s"

[[workers]]
id = "w1"

[[tasks]]
id = "t1"

[[step]]
do = "advance"
by = "1s"

[[step]]
do = "reject"
task = "t1"
expect = [{ rejected = "any", count = 0 }, { task = "t1", status = "running" }]
"""


def test_the_player_and_the_session_say_the_decision_was_ignored() -> None:
    scenario = parse_scenario(IGNORED_DECISION, "early.toml")
    result = PlayResult()
    records = list(play(scenario, result=result))
    assert (result.passed, result.failed) == (2, 0)
    (ignored,) = [r for r in records if r.get("event") == "reject_ignored"]
    line = "".join(text for text, _ in render_line(ignored))
    assert line.endswith("Rejecting t1 changes nothing: it is not waiting\n")
    zh = "".join(text for text, _ in render_line(ignored, "zh"))
    assert zh.endswith("驳回任务 1 没有作用：它不在等待审批\n")
    session = Session(scenario)
    session.next_step()
    outcome = session.next_step()
    assert outcome is not None and outcome.ok
    assert outcome.result is not None and outcome.result.ignored
