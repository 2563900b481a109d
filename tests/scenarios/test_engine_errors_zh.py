"""An error the core raises while a scenario plays is a sentence in the run's language,
from one table keyed by the error's name (never by reading its English): the player's
"step N cannot run", the app's refusals and notices. The English stays as it was."""

import re

import pytest

from core.engine.config import LeaseConfig
from core.engine.errors import BorrowedKeysError, DuplicateTask, UnknownTask, Why
from core.scenarios.format import ScenarioError, parse_scenario
from core.scenarios.glossary import ENGINE_ERRORS
from core.scenarios.player import play
from core.scenarios.telling import error_sentence
from core.sim.simulation import ActionError, ActionResult, Simulation, Unfit
from core.sim.spec import (
    AddWorker,
    Advance,
    Approve,
    Claim,
    Enqueue,
    FreezeHeartbeat,
    Heartbeat,
    Kill,
    Partition,
    SimSettings,
    Stall,
    TaskSpec,
    WorkerSpec,
    Write,
)

_CJK = re.compile(r"[\u4e00-\u9fff]")
# an identifier a Chinese line must not show: a latin word of two letters or more
_LATIN_WORD = re.compile(r"[A-Za-z_]{2,}")

NO_LEASE = """\
title = "A write with no lease"

[[workers]]
id = "acheng"
autopilot = false

[[tasks]]
id = "sixth"

[[step]]
do = "write"
worker = "acheng"
key = "sixth/1"
value = "x"
"""


def _stopped(lang: str) -> ScenarioError:
    scenario = parse_scenario(NO_LEASE, "bad.toml")
    with pytest.raises(ScenarioError) as caught:
        list(play(scenario, lang=lang))
    return caught.value


def test_a_step_the_engine_refuses_is_said_in_chinese_by_the_player() -> None:
    told = _stopped("zh").in_language("zh")
    where, said = told.split(": ", 1)
    assert where == "bad.toml:11"  # `FILE:LINE:` stays as editors read it
    assert said == "第 1 步无法执行：阿澄的记忆里没有租约，写入总册做不成"
    assert not _LATIN_WORD.search(said), said


def test_the_english_of_a_refused_step_is_unchanged() -> None:
    told = _stopped("en").in_language("en")
    assert told == "bad.toml:11: step 1 cannot run: write: acheng holds no lease in its memory"


def test_every_error_name_has_a_row_in_both_languages() -> None:
    """A new Why or Unfit without a row fails here."""
    names = [*Why, *Unfit]
    assert len({n.value for n in names}) == len(names), "two enums share a name"
    for name in names:
        assert name.value in ENGINE_ERRORS, f"no row for {name!r}"
        en, zh = ENGINE_ERRORS[name.value]
        # a refusal is said whole by the refusals' own sentence
        assert en.strip() and (_CJK.search(zh) or zh == "{refusal}"), name
    assert set(ENGINE_ERRORS) == {n.value for n in names}, "a row for no error"


def test_every_error_class_names_a_why_with_a_row() -> None:
    import core.engine.backends.postgresql
    import core.engine.backends.sqlite  # noqa: F401  (their classes count too)

    def every(cls: type[BorrowedKeysError]) -> list[type[BorrowedKeysError]]:
        return [cls, *(k for sub in cls.__subclasses__() for k in every(sub))]

    classes = every(BorrowedKeysError)
    assert len(classes) > 15
    for cls in classes:
        if cls is ScenarioError:
            continue  # said in both languages where it is made
        assert cls.why.value in ENGINE_ERRORS, cls


def _sim(*, autopilot: bool = False) -> Simulation:
    return Simulation(
        SimSettings(
            config=LeaseConfig(ttl_ms=3_000),
            workers=(WorkerSpec("acheng", autopilot=autopilot),),
            tasks=(TaskSpec("sixth", steps=3, step_time_ms=1_000),),
        )
    )


def _raised(sim: Simulation, action: object) -> ActionError:
    with pytest.raises(ActionError) as caught:
        sim.apply(action)  # type: ignore[arg-type]
    return caught.value


def _refused(sim: Simulation, action: object) -> BorrowedKeysError:
    result: ActionResult = sim.apply(action)  # type: ignore[arg-type]
    assert result.error is not None, result
    assert not result.ok or result.ignored
    return result.error


def _cases() -> list[tuple[str, BorrowedKeysError]]:
    """Each error an act can meet in a run, made by the run itself."""
    out: list[tuple[str, BorrowedKeysError]] = []
    sim = _sim()
    out.append(("unknown worker", _raised(sim, Kill("nobody"))))
    out.append(("worker exists", _raised(sim, AddWorker("acheng"))))
    out.append(("no lease", _raised(sim, Heartbeat("acheng"))))
    out.append(("duplicate", _raised(sim, Enqueue("sixth"))))
    out.append(("backwards", _raised(sim, Advance(-1))))
    out.append(("not waiting", _refused(sim, Approve("sixth"))))
    with pytest.raises(ActionError) as saving:
        _sim(autopilot=True).save()
    out.append(("save", saving.value))
    sim.apply(Claim("acheng", "sixth"))
    sim.apply(Claim("acheng"))
    out.append(("nothing to claim", _refused(sim, Claim("acheng"))))
    sim.apply(FreezeHeartbeat("acheng"))
    out.append(("frozen", _refused(sim, Heartbeat("acheng"))))
    sim.apply(Partition("acheng"))
    out.append(("partitioned", _refused(sim, Write("acheng", "sixth/1", "x"))))
    sim.apply(Stall("acheng"))
    out.append(("stalled", _refused(sim, Heartbeat("acheng"))))
    sim.apply(Kill("acheng"))
    out.append(("dead", _refused(sim, FreezeHeartbeat("acheng"))))
    out.append(("unknown task", UnknownTask("sixth")))
    out.append(("duplicate task", DuplicateTask("sixth")))
    return out


CASES = _cases()


@pytest.mark.parametrize(("case", "error"), CASES, ids=[c for c, _ in CASES])
def test_the_table_says_the_english_the_core_says(case: str, error: BorrowedKeysError) -> None:
    assert error_sentence(error, "en") == str(error)


@pytest.mark.parametrize(("case", "error"), CASES, ids=[c for c, _ in CASES])
def test_the_chinese_is_a_sentence_without_identifiers(case: str, error: BorrowedKeysError) -> None:
    said = error_sentence(error, "zh")
    assert _CJK.search(said), said
    # an id the story has no name for (a task, a stranger) stays as the run spells it;
    # nothing else is latin
    assert not _LATIN_WORD.search(said.replace("sixth", "").replace("nobody", "")), said


def test_the_whys_the_run_met_cover_every_act_the_simulation_refuses() -> None:
    causes = [e.fill["cause"] for _, e in CASES if "cause" in e.fill]
    met = {e.why for _, e in CASES} | {c.why for c in causes if isinstance(c, BorrowedKeysError)}
    unmet = set(Unfit) - met - {Unfit.UNKNOWN_ACTION, Unfit.SAVE_NEEDS_SQLITE}
    assert not unmet
