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

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from core.scenarios.format.loader import load_scenario, parse_scenario
    from core.scenarios.format.schema import (
        ACTION_KEYS,
        ACTION_KEYS_OF,
        EXPECT_SUBJECTS,
        STEP_KEYS,
        TASK_KEYS,
        TOP_KEYS,
        WORKER_KEYS,
    )

# The loader and the schema hold the format's pydantic models, a tenth of a second to import:
# a run opened from its precompiled scenario (core/scenarios/precompiled.py) never needs them,
# so they load when first asked for.
_LAZY = {
    "load_scenario": "loader",
    "parse_scenario": "loader",
    "ACTION_KEYS": "schema",
    "ACTION_KEYS_OF": "schema",
    "EXPECT_SUBJECTS": "schema",
    "STEP_KEYS": "schema",
    "TASK_KEYS": "schema",
    "TOP_KEYS": "schema",
    "WORKER_KEYS": "schema",
}


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where == "loader":
        from core.scenarios.format import loader

        return getattr(loader, name)
    if where == "schema":
        from core.scenarios.format import schema

        return getattr(schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
