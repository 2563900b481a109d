"""The writer: dump_scenario's text parses back to the same settings and steps."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.config import LeaseConfig, Mode
from core.engine.ids import id_problem, shown_text_problem
from core.scenarios.format import Expectation, Scenario, Step, parse_scenario
from core.scenarios.writer import dump, dump_scenario, toml_value
from core.sim.spec import (
    Advance,
    Approve,
    Checkpoint,
    Claim,
    Fail,
    Kill,
    SimSettings,
    Skew,
    Slow,
    TaskSpec,
    WorkerSpec,
    Write,
)

HERE = Path(__file__).parents[1]
FILES = sorted((HERE / "scenarios_ok").glob("*.toml"))
BUNDLED = sorted((HERE.parent / "scenarios").glob("*.toml"))


def same(a: Scenario, b: Scenario) -> None:
    assert (a.title, a.title_zh, a.summary, a.summary_zh) == (
        b.title,
        b.title_zh,
        b.summary,
        b.summary_zh,
    )
    assert a.settings == b.settings
    assert a.steps == b.steps


@pytest.mark.parametrize("path", FILES + BUNDLED, ids=[p.name for p in FILES + BUNDLED])
def test_every_file_round_trips(path: Path) -> None:
    original = parse_scenario(path.read_bytes(), str(path))
    text = dump(original)
    again = parse_scenario(text, "again.toml")
    same(original, again)
    assert dump(again) == text  # and the text is a fixed point


def test_comments_and_signature() -> None:
    text = dump_scenario(
        "Found by chaos",
        SimSettings(mode=Mode.NO_FENCING, seed=42, workers=(WorkerSpec("a"),)),
        [Step(action=Advance(by_ms=1500), expects=(Expectation("violation", "any"),))],
        summary="line one, line two",
        comments=["borrowed-keys chaos --seed 42", "shrunk to 1 fault"],
    )
    assert text.startswith("# borrowed-keys chaos --seed 42\n# shrunk to 1 fault\n")
    s = parse_scenario(text, "r.toml")
    assert s.summary == "line one, line two"
    assert s.steps[0].action == Advance(by_ms=1500)


def test_toml_value_escapes() -> None:
    assert toml_value('a "b" \\ \x7f \x01\n') == '"a \\"b\\" \\\\ \\u007f \\u0001\\n"'
    assert toml_value(True) == "true" and toml_value(2.5) == "2.5"


# -- hypothesis: generated valid scenarios round-trip ---------------------------------------

# Ids by the store's rule: one line of printable text (what str.isprintable calls so).
ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"))
    | st.just(" "),
    min_size=1,
    max_size=8,
).filter(lambda s: id_problem(s) is None)
# Text a file may hold: one line of printable characters (any space among them).
texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")),
    max_size=30,
).filter(lambda s: shown_text_problem(s) is None)
ms = st.integers(min_value=1, max_value=86_400_000)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, SimSettings, list[Step]]:
    workers = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    tasks = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    worker_specs = tuple(
        WorkerSpec(w, draw(st.booleans()), draw(st.integers(-86_400_000, 86_400_000)))
        for w in workers
    )
    task_specs = tuple(
        TaskSpec(
            t,
            draw(st.sampled_from(["ledger", "browser", "tools", "approval"])),
            draw(st.integers(1, 1000)),
            draw(ms),
            draw(st.integers(1, 100)),
        )
        for t in tasks
    )
    ttl = draw(st.integers(3, 86_400_000))
    config = LeaseConfig(ttl_ms=ttl, poll_every_ms=draw(st.integers(60_000, 86_400_000)))
    if draw(st.booleans()):
        config = LeaseConfig(ttl_ms=ttl, heartbeat_every_ms=1, renew_deadline_ms=2,
                             poll_every_ms=config.poll_every_ms)  # fmt: skip
    sim = SimSettings(
        mode=draw(st.sampled_from([m for m in Mode if m is not Mode.LONG_LEASE])),
        seed=draw(st.integers(-(2**62), 2**62)),
        config=config,
        self_fencing=draw(st.booleans()),
        workers=worker_specs,
        tasks=task_specs,
    )
    manual = [w.id for w in worker_specs if not w.autopilot]
    steps = []
    for _ in range(draw(st.integers(0, 6))):
        any_worker = draw(st.sampled_from(workers))
        options = [
            Advance(by_ms=draw(st.integers(1, 1000))),
            Slow(worker=any_worker, factor=draw(st.floats(0.01, 1000))),
            Skew(worker=any_worker, by_ms=draw(st.integers(-5000, 5000))),
            Kill(worker=any_worker),
            Approve(task=draw(st.sampled_from(tasks))),
        ]
        if manual:
            w = draw(st.sampled_from(manual))
            options += [
                Claim(worker=w, task=draw(st.sampled_from(tasks))),
                Write(worker=w, key=draw(ids), value=draw(texts)),
                Checkpoint(worker=w, step=draw(st.integers(1, 1000))),
                Fail(worker=w, retry=draw(st.booleans())),
            ]
        action = draw(st.one_of(st.none(), st.sampled_from(options)))
        expects = draw(
            st.lists(
                st.sampled_from(
                    [
                        Expectation("task", draw(st.sampled_from(tasks)),
                                    (("status", "done"), ("owner", ""), ("attempt", 2))),
                        Expectation("worker", draw(st.sampled_from(workers)), (("state", "dead"),)),
                        Expectation("ledger", draw(ids), (("value", draw(texts)),)),
                        Expectation("rejected", "any", (("worker", any_worker),)),
                        Expectation("violation", "double_owner", (("count", 0),)),
                        Expectation("metric", "recovery_time", (("max", draw(ms)),)),
                        Expectation("effect", draw(ids), ()),
                    ]
                ),
                max_size=3,
            )
        )  # fmt: skip
        say = draw(st.one_of(st.none(), texts))
        if action is None and not expects and say is None:
            say = ""
        steps.append(Step(say=say, say_zh=draw(st.one_of(st.none(), texts)), action=action,
                          expects=tuple(expects)))  # fmt: skip
    return draw(texts.filter(lambda t: t.strip() != "")), sim, steps


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_generated_scenarios_round_trip(case: tuple[str, SimSettings, list[Step]]) -> None:
    title, sim, steps = case
    text = dump_scenario(title, sim, steps, title_zh="标题", summary_zh="摘要")
    s = parse_scenario(text, "gen.toml")
    assert s.title == title and s.title_zh == "标题" and s.summary_zh == "摘要"
    assert s.settings == sim
    assert s.steps == tuple(steps)
