"""Every bundled scenario plays with exit 0 in both languages, and deterministically."""

from importlib.resources import files

import pytest

from core.scenarios.format import load_scenario
from core.tools.cli import main

BUNDLED = sorted(
    p.name.removesuffix(".toml") for p in files("scenarios").iterdir() if p.name.endswith(".toml")
)


def test_the_library_has_every_scenario() -> None:
    # 14 plus the lessons of issue 9: the seed's SQL, heartbeat in the work loop,
    # self-fencing, and a lease too short
    assert {"15_seed_sql", "16_heartbeat_in_work", "17_self_fencing"} <= set(BUNDLED)
    assert "18_lease_too_short" in BUNDLED and len(BUNDLED) >= 18
    for name in BUNDLED:
        scenario = load_scenario(str(files("scenarios") / f"{name}.toml"))
        assert scenario.title and scenario.title_zh and scenario.summary and scenario.summary_zh
        assert scenario.warnings == ()
        narrated = [s for s in scenario.steps if s.say]
        assert narrated and all(s.say_zh for s in narrated), f"{name} narrates in both languages"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_scenario_plays_and_every_expectation_holds(
    name: str, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["play", name, "--lang", lang]) == 0, capsys.readouterr().out[-3000:]


@pytest.mark.parametrize("name", ["01_fog", "09_mistake_no_fencing", "14_sandbox"])
def test_json_transcript_is_byte_identical_across_runs(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["play", name, "--json"])
    first = capsys.readouterr().out
    main(["play", name, "--json"])
    assert capsys.readouterr().out == first


def test_every_mistake_scenario_shows_its_damage(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    damage = {
        "07_mistake_no_expiry": "stuck_task",
        "09_mistake_no_fencing": "stale_write_accepted",
        "11_mistake_client_clock": "double_owner",
        "12_mistake_no_idempotency": "duplicate_effect",
        "15_seed_sql": "completed_twice",
    }
    for name, violation in damage.items():
        main(["play", name, "--json"])
        summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert summary["type"] == "summary"
        assert violation in summary["violations"], name


def test_transcript_does_not_depend_on_the_interpreters_hash_seed() -> None:
    import os
    import subprocess
    import sys

    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-m", "demo.cli", "play", "14_sandbox", "--json"],
            capture_output=True,
            check=True,
            env=env,
            timeout=120,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
