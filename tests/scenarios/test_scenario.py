"""The scenario loader: defaults, the format's nouns, lines and warnings."""

from pathlib import Path

import pytest

from core.engine.config import Mode
from core.scenarios.format import Expectation, ScenarioError, load_scenario, parse_scenario
from core.sim.spec import (
    AddWorker,
    Advance,
    Claim,
    Enqueue,
    Skew,
    TaskSpec,
    WorkerSpec,
    Write,
)

HERE = Path(__file__).parents[1]


def parse(text: str) -> object:
    return parse_scenario(text, "s.toml")


def error_of(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "s.toml")
    return caught.value


def test_defaults() -> None:
    s = parse_scenario('title = "t"\n[[workers]]\nid = "a"\n[[tasks]]\nid = "t1"\n', "s.toml")
    assert s.title == "t" and s.title_zh is None and s.summary is None
    st = s.settings
    assert st.mode is Mode.CORRECT and st.seed == 0 and st.self_fencing is False
    assert st.config.ttl_ms == 60_000
    assert st.config.heartbeat_ms == 20_000
    assert st.config.deadline_ms == 40_000
    assert st.config.poll_every_ms == 5_000
    assert st.workers == (WorkerSpec("a", True, 0),)
    assert st.tasks == (TaskSpec("t1", "ledger", 5, 10_000, 5),)
    assert s.steps == () and s.warnings == ()


def test_everything_read() -> None:
    s = load_scenario(HERE / "scenarios_ok" / "manual.toml")
    assert s.path.endswith("manual.toml")
    assert s.settings.config.heartbeat_every_ms == 10_000
    assert [w.autopilot for w in s.settings.workers] == [False, False]
    first = s.steps[0]
    assert first.line == 18 and first.action_line == 20
    assert first.action == Claim(worker="a")
    assert first.expects == (Expectation("task", "t1", (("owner", "a"), ("lease_token", 1))),)
    assert first.expects[0].line == 22
    write = s.steps[4]
    assert write.action == Write(worker="a", key="page-1", value="A's page")
    assert [e.line for e in write.expects] == [46, 47]
    assert write.expects[0].subject == "rejected" and write.expects[0].get("worker") == "a"
    assert s.steps[5].action == Enqueue(task="t2", kind="tools")
    assert s.steps[6].action == AddWorker(worker="c", skew_ms=-2000)
    # a task enqueued by a step can be named from then on
    assert s.steps[7].expects[1] == Expectation("metric", "wasted_steps", (("min", 0), ("max", 3)))


def test_durations_with_their_units() -> None:
    s = parse_scenario(
        'title = "t"\nlease_ttl = "30s"\npoll_every = "0.5s"\n[[workers]]\nid = "a"\n'
        '[[step]]\ndo = "skew"\nworker = "a"\nby = "-1500ms"\n'
        '[[step]]\ndo = "advance"\nby = "2m"\n'
        'expect = [{ metric = "recovery_time", min = "0s", max = "90s" }]\n',
        "s.toml",
    )
    assert s.settings.config.ttl_ms == 30_000 and s.settings.config.poll_every_ms == 500
    assert s.steps[0].action == Skew(worker="a", by_ms=-1500)
    assert s.steps[1].action == Advance(by_ms=120_000)
    assert s.steps[1].expects[0].params == (("min", 0), ("max", 90_000))


def test_heartbeat_above_half_the_ttl_is_a_warning() -> None:
    s = parse_scenario('title = "t"\nlease_ttl = "60s"\nheartbeat_every = "35s"\n'
                       'renew_deadline = "50s"\n', "w.toml")  # fmt: skip
    assert len(s.warnings) == 1
    assert s.warnings[0].startswith("w.toml:3: warning: heartbeat_every (35s) is more than half")


def test_long_lease_keeps_timing_sane() -> None:
    e = error_of('title = "t"\nmode = "long_lease"\nlease_ttl = "24h"\nheartbeat_every = "1h"\n')
    assert e.line == 4 and "long_lease" in e.message


def test_a_timing_rule_is_told_on_the_line_of_its_key() -> None:
    e = error_of('title = "t"\n\nlease_ttl = "1ms"\n')
    assert (e.line, e.message) == (3, "lease_ttl is too short to divide into beats")
    e = error_of('title = "t"\nrenew_deadline = "2m"\n')  # longer than the default ttl
    assert (e.line, e.message) == (2, "lease_ttl (1m) must be longer than renew_deadline (2m)")


def test_narration_only_and_expect_only_steps() -> None:
    s = parse_scenario(
        'title = "t"\n[[tasks]]\nid = "t1"\n[[step]]\nsay = "hi"\nsay_zh = "你好"\n'
        '[[step]]\nexpect = [{ task = "t1", status = "queued", owner = "" }]\n',
        "s.toml",
    )
    assert s.steps[0].action is None and s.steps[0].narration("zh") == "你好"
    assert s.steps[1].narration("zh") is None
    assert s.steps[1].expects[0].get("owner") == ""


def test_expect_as_array_of_tables_finds_lines() -> None:
    s = parse_scenario(
        'title = "t"\n[[tasks]]\nid = "t1"\n[[step]]\nsay = "x"\n'
        '[[step.expect]]\ntask = "t1"\n[[step.expect]]\ntask = "t1"\nstatus = "done"\n'
        '[[step]]\nsay = "y"\n[[step.expect]]\ntask = "t1"\nstatus = "queued"\n',
        "s.toml",
    )
    first, second = s.steps[0].expects
    assert first == Expectation("task", "t1") and first.line == 6
    assert second == Expectation("task", "t1", (("status", "done"),)) and second.line == 8
    (third,) = s.steps[1].expects
    assert third.get("status") == "queued" and third.line == 13
    # and a problem inside one is told on its own line
    e = error_of(
        'title = "t"\n[[tasks]]\nid = "t1"\n[[step]]\nsay = "x"\n'
        '[[step.expect]]\ntask = "t1"\n[[step.expect]]\ntask = "t1"\nstatus = "gone"\n'
    )
    assert e.line == 8 and 'unknown task status "gone"' in e.message


def test_error_text_is_file_line_message() -> None:
    e = error_of('title = "t"\n\n\n[[step]]\ndo = "teleport"\n')
    assert str(e) == 's.toml:5: unknown action "teleport"'
    assert (e.path, e.line, e.message) == ("s.toml", 5, 'unknown action "teleport"')


def test_line_found_in_the_right_step() -> None:
    text = 'title = "t"\n[[workers]]\nid = "a"\n'
    text += '[[step]]\ndo = "kill"\nworker = "a"\n' * 3
    text += '[[step]]\ndo = "kill"\nworker = "b"\n'
    assert error_of(text).line == 15


def test_manual_worker_added_later_is_manual() -> None:
    text = 'title = "t"\n[[tasks]]\nid = "t1"\n[[step]]\ndo = "add_worker"\nworker = "m"\n'
    ok = text.replace('worker = "m"\n', 'worker = "m"\nautopilot = false\n')
    ok += '[[step]]\ndo = "claim"\nworker = "m"\n'
    parse_scenario(ok, "s.toml")
    bad = text + '[[step]]\ndo = "claim"\nworker = "m"\n'
    assert "autopilot" in error_of(bad).message


def test_quoted_keys_are_found() -> None:
    e = error_of('title = "t"\n"seed" = "x"\n')
    assert e.line == 2


def test_a_scenario_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"__import__('os').system('touch {marker}')"
    s = parse_scenario(f'title = "{code}"\n[[step]]\nsay = "{code}"\n', "s.toml")
    assert not marker.exists() and s.title == code and s.steps[0].say == code
    # Nothing that reads a file can run what it says: no eval, exec, compile or import by
    # name anywhere in the loader, and no loader that builds objects (pickle, yaml, ...).
    import ast

    import core.scenarios.format as fmt

    builtins = {"eval", "exec", "compile", "__import__"}
    for source in Path(fmt.__file__).parent.glob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                runs = (isinstance(f, ast.Name) and f.id in builtins) or (
                    isinstance(f, ast.Attribute) and f.attr == "import_module"
                )
                assert not runs, f"{source.name}:{node.lineno} runs code: {ast.unparse(f)}"
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not {"pickle", "marshal", "yaml", "shelve"} & {m.split(".")[0] for m in mods}


def test_every_action_has_a_model_in_the_format_and_no_other() -> None:
    from core.scenarios.format import ACTION_KEYS_OF
    from core.sim.spec import ACTION_TYPES

    assert set(ACTION_KEYS_OF) == set(ACTION_TYPES)
    assert ACTION_KEYS_OF["add_worker"] == ("worker", "skew", "autopilot")
    assert ACTION_KEYS_OF["advance"] == ("by",)
