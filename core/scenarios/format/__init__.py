"""Scenario files: the public TOML format the player, the TUI and the fuzzer share.

A scenario is plain TOML read with the standard library's `tomllib`; nothing in it is ever
executed. `load_scenario` / `parse_scenario` turn a file into a `Scenario` (settings, workers,
tasks and playback steps) or raise `ScenarioError`, whose text is one line `FILE:LINE: what is
wrong`. The format is documented in docs/scenario-format.md.

The package, by job: `model` (what a file becomes, the names and limits), `source` (bytes to
TOML, and where keys are in the raw text), `fields` and `schema` (the format declared as
pydantic models, one per table, action and expectation subject, which reject unknown keys),
`explain` (a validation problem in this format's words, on its line) and `loader` (the entry
points and the checks that need the whole file).
"""

from core.scenarios.format.loader import load_scenario, parse_scenario
from core.scenarios.format.model import (
    METRICS,
    PANELS,
    REJECT_REASONS,
    TASK_STATUSES,
    TIME_KEYS,
    VIOLATIONS,
    WORKER_STATES,
    Expectation,
    ExpectValue,
    Panel,
    Question,
    Scenario,
    ScenarioError,
    Step,
    Subject,
    TimingNote,
    instant_text,
    toml_value,
)
from core.scenarios.format.schema import (
    ACTION_KEYS,
    ACTION_KEYS_OF,
    EXPECT_SUBJECTS,
    STEP_KEYS,
    TASK_KEYS,
    TOP_KEYS,
    WORKER_KEYS,
)

__all__ = [
    "ACTION_KEYS",
    "ACTION_KEYS_OF",
    "EXPECT_SUBJECTS",
    "METRICS",
    "PANELS",
    "REJECT_REASONS",
    "STEP_KEYS",
    "TASK_KEYS",
    "TASK_STATUSES",
    "TIME_KEYS",
    "TOP_KEYS",
    "VIOLATIONS",
    "WORKER_KEYS",
    "WORKER_STATES",
    "ExpectValue",
    "Expectation",
    "Panel",
    "Question",
    "Scenario",
    "ScenarioError",
    "Step",
    "Subject",
    "TimingNote",
    "instant_text",
    "load_scenario",
    "parse_scenario",
    "toml_value",
]
