"""One glossary: the transcript, the app and the help page say the same word for each thing."""

import enum
from importlib.resources import files

import pytest

from core.engine.config import Mode
from core.engine.errors import RegisterReason, RejectReason
from core.engine.vocabulary import EventKind, TaskStatus
from core.scenarios import glossary
from core.scenarios.format import TASK_STATUSES, WORKER_STATES, load_scenario
from core.scenarios.player import play
from core.sim.checker import ViolationKind
from core.sim.rules import Harm
from core.sim.spec import ACTION_TYPES, WorkerState
from demo import i18n

EVERY_TABLE = {
    "concepts": glossary.CONCEPTS,
    "tokens": glossary.TOKENS,
    "panels": glossary.PANELS,
    "columns": glossary.COLUMNS,
    "headers": glossary.HEADERS,
    "narrow_headers": glossary.NARROW_HEADERS,
    "statuses": glossary.TASK_STATUSES,
    "states": glossary.WORKER_STATES,
    "events": glossary.EVENTS,
    "reasons": glossary.REASONS,
    "violations": glossary.VIOLATIONS,
    "modes": glossary.MODES,
    "actions": glossary.ACTIONS,
    "people": glossary.PEOPLE,
    "story": glossary.STORY,
}


def test_every_name_the_core_knows_has_a_chinese_word() -> None:
    assert set(TASK_STATUSES) <= set(glossary.TASK_STATUSES)
    assert set(WORKER_STATES) <= set(glossary.WORKER_STATES)
    assert {r.value for r in RejectReason} <= set(glossary.REASONS)
    assert {v.value for v in ViolationKind} <= set(glossary.VIOLATIONS)
    assert {h.value for h in Harm} == set(glossary.HARMS)
    assert {m.value for m in Mode} <= set(glossary.MODES)
    assert set(ACTION_TYPES) <= set(glossary.ACTIONS)


@pytest.mark.parametrize(
    ("table", "words"),
    [
        (glossary.TASK_STATUSES, TaskStatus),
        (glossary.WORKER_STATES, WorkerState),
        (glossary.EVENTS, EventKind),
        (glossary.VIOLATIONS, ViolationKind),
        (glossary.MODES, Mode),
    ],
    ids=["statuses", "states", "events", "violations", "modes"],
)
def test_each_glossary_table_names_exactly_its_enum(
    table: dict[str, tuple[str, str]], words: type[enum.StrEnum]
) -> None:
    # each word the core can write has its translation, and the glossary no word it never writes
    assert set(table) == {w.value for w in words}


def test_the_reasons_are_the_rejections_and_the_other_register_reasons() -> None:
    both = [*RejectReason, *RegisterReason]
    assert set(glossary.REASONS) == {r.value for r in both} and len(both) == len(set(both))


def test_every_event_of_the_bundled_scenarios_has_a_chinese_word() -> None:
    seen: set[str] = set()
    for f in files("scenarios").iterdir():
        if f.name.endswith(".toml"):
            scenario = load_scenario(str(f))
            seen |= {str(r["event"]) for r in play(scenario) if r["type"] == "event"}
    assert seen and seen <= set(glossary.EVENTS), sorted(seen - set(glossary.EVENTS))


def test_the_english_of_a_store_name_is_the_name_itself_said_as_words() -> None:
    # the name --json and the scenario files spell, read aloud: never a snake_case id
    for table in (glossary.EVENTS, glossary.REASONS, glossary.TASK_STATUSES):
        assert all(en == name.replace("_", " ") for name, (en, _zh) in table.items())


def test_a_broken_rule_is_a_phrase_never_its_id() -> None:
    # the light and the summary name what broke in the run's language
    for name, (en, zh) in glossary.VIOLATIONS.items():
        assert "_" not in en and en != name and zh != name
    counts = {"stale_write_accepted": 1, "double_owner": 2, "stuck_task": 0}
    assert glossary.violations_phrase(counts, "en") == (
        "stale write accepted × 1, two live leases at once × 2"
    )
    assert glossary.violations_phrase(counts, "zh") == (
        "过期写入被接受 × 1，同时有两份未过期的租约 × 2"
    )
    assert glossary.violations_phrase({}, "en") == ""


@pytest.mark.parametrize("name", sorted(EVERY_TABLE))
def test_no_word_reads_as_translated(name: str) -> None:
    # the seed says worker or 执行者; 工作者 is a translation, and one fence is one word
    for en, zh in EVERY_TABLE[name].values():
        assert "工作者" not in zh and "租约令牌" not in zh, (name, en, zh)
        assert zh.strip() and en.strip()


def test_lookups_fall_back_to_the_name() -> None:
    assert glossary.event_word("something_new", "zh") == "something_new"
    assert glossary.person_name("w7", "zh") is None
    assert glossary.person_name("acheng", "en") == "Acheng"
    assert glossary.person_name("laojiang", "zh") == "老绛"


def test_every_table_is_read_by_the_one_lookup() -> None:
    """The transcript's and the app's words go through glossary.lookup, as the glossary's do."""
    from core.scenarios import player

    assert player.word("step", "zh", n=3) == glossary.lookup(glossary.TRANSCRIPT, "step", "zh", n=3)
    assert i18n.tr("kill", "zh") == glossary.lookup(i18n.WORDS, "kill", "zh") == "杀死"
    assert glossary.event_word("claimed", "zh") == glossary.lookup(glossary.EVENTS, "claimed", "zh")
    assert glossary.lookup(glossary.EVENTS, "not_a_word", "zh") == "not_a_word"
    assert not hasattr(player, "WORDS")
