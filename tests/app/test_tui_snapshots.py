"""Snapshot tests (pytest-textual-snapshot) of the main screen and the help page.

Deterministic: a fixed terminal size and no live clock (`live_clock=False`), so the screen
changes only by the key presses listed (each commented).
"""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from core.scenarios.format import load_scenario
from demo.app import BorrowedKeysApp
from tests.app.apps import at_step

SCENARIOS = Path(__file__).parents[2] / "scenarios"
SIZE = (160, 48)


def jump_to(k: int) -> Callable[[Any], Awaitable[None]]:
    """Before the keys: to just after step k by the step list's jump (the screen a presenter
    gets there by `g`, the same as by stepping; one frame, not one a step)."""

    async def before(pilot: Any) -> None:
        await at_step(pilot, k)

    return before


def app_for(name: str, lang: str) -> BorrowedKeysApp:
    return BorrowedKeysApp(
        load_scenario(SCENARIOS / name), open_directly=True, lang=lang, live_clock=False
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fog_after_three_steps(snap_compare: Any, lang: str) -> None:
    # n, n, n: three steps of scenario 1 (the claim, the first page, the fog)
    assert snap_compare(app_for("01_fog.toml", lang), press=["n", "n", "n"], terminal_size=SIZE)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_fencing_at_the_end_of_its_script(snap_compare: Any, lang: str) -> None:
    # n x 5: all five steps of the no-fencing mistake, where the stale page gets through; the
    # last one asks first (v reveals the answer, n plays the step)
    assert snap_compare(
        app_for("09_mistake_no_fencing.toml", lang),
        press=["n"] * 5 + ["v", "n"],
        terminal_size=SIZE,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_help_screen(snap_compare: Any, lang: str) -> None:
    # ?: open the help page over the first scenario
    assert snap_compare(app_for("01_fog.toml", lang), press=["question_mark"], terminal_size=SIZE)


@pytest.mark.parametrize(
    "size", [(80, 24), (120, 40), (200, 60)], ids=["80x24", "120x40", "200x60"]
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fence_rejection_at_every_size(snap_compare: Any, lang: str, size: tuple[int, int]) -> None:
    # to step 14 (as n x 14 and v to reveal the audience's question), then 3: scenario 1 at
    # Acheng's refused stale page, with the Rejected panel shown
    assert snap_compare(
        app_for("01_fog.toml", lang), press=["3"], terminal_size=size, run_before=jump_to(14)
    )


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_belief_against_truth_at_the_fence(
    snap_compare: Any, lang: str, size: tuple[int, int]
) -> None:
    # n x 14, v, 6: scenario 1 at the fence, with Belief vs truth open: Acheng's belief runs
    # on past her lease's expiry at 0:01:20 to the refusal at 0:01:35; Linzhou's lease from
    # 0:01:25
    assert snap_compare(
        app_for("01_fog.toml", lang), press=["n"] * 14 + ["v", "6"], terminal_size=size
    )


SIZES = [(80, 24), (100, 30), (200, 60)]
SIZE_IDS = ["80x24", "100x30", "200x60"]


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fork_at_every_size(snap_compare: Any, lang: str, size: tuple[int, int]) -> None:
    # n x 8: to step 8, Linzhou arrives idle; e: enqueue a task, the playback forks and the
    # script's workers go on by themselves; n x 4: 20 s of the fork's live time pass (stepped,
    # not jumped: each step brings its own panel into view, and the fork keeps the last)
    assert snap_compare(
        app_for("01_fog.toml", lang), press=["n"] * 8 + ["e"] + ["n"] * 4, terminal_size=size
    )


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_question_under_the_step_it_asks_about(
    snap_compare: Any, lang: str, size: tuple[int, int]
) -> None:
    # to step 13, then n: step 14 asks the audience first; n once more: it does not give the
    # answer away
    assert snap_compare(
        app_for("01_fog.toml", lang), press=["n", "n"], terminal_size=size, run_before=jump_to(13)
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_step_list(snap_compare: Any, lang: str) -> None:
    # n x 3: three steps; g: the step list, at step 3
    assert snap_compare(
        app_for("01_fog.toml", lang), press=["n", "n", "n", "g"], terminal_size=(100, 30)
    )


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_step_folded_at_every_size(
    snap_compare: Any, lang: str, size: tuple[int, int]
) -> None:
    # to step 14 (its question revealed), n x 3: step 17, the last, its narration long; on a
    # small screen folded above the ledger's rows, at 200 x 60 whole, with the log beside
    # at a sensible height and the refused writes under it
    assert snap_compare(
        app_for("01_fog.toml", lang), press=["n"] * 3, terminal_size=size, run_before=jump_to(14)
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_mode_list(snap_compare: Any, lang: str) -> None:
    # n x 3: three steps; m: the modes in a list, the correct run's twin highlighted
    assert snap_compare(
        app_for("01_fog.toml", lang), press=["n", "n", "n", "m"], terminal_size=(100, 30)
    )
