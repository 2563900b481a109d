"""The fleet app's keys: the simulated app's fault keys, from the one fault table, on real
worker processes. Each key on the chosen worker sends its signal and the process changes
state where the kernel shows it (`T` after a stall, gone after a kill), in both languages,
and the key bar lists the keys.

Real processes on the real clock (marked slow). The waits are on what the processes say
and on the process table, each bounded by WAIT_S, which only a hung run reaches.
"""

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core.fleet.supervisor import Fleet, FleetSettings
from demo.controls import FAULT_KEYS, FAULTS
from demo.fleet_app import FleetApp
from demo.i18n import tr
from demo.screens.fleet import FleetCommands, FleetScreen, ended
from demo.widgets.keybar import KeyBar
from demo.widgets.worker_pane import WorkerGrid

pytestmark = pytest.mark.slow

WAIT_S = 60.0


def state_of(pid: int) -> str | None:
    """The process's state letter in /proc (None once it is gone or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            letter = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None
    return None if letter == "Z" else letter


def title_of(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode().strip()


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_every_fault_key_on_the_chosen_worker_sends_its_signal(
    tmp_path: Path, lang: str
) -> None:
    settings = FleetSettings(
        db=str(tmp_path / "keys.db"), ttl_ms=1500, poll_ms=150, steps=50, step_ms=600
    )
    fleet = Fleet(settings, tmp_path / "logs")
    try:
        fleet.enqueue(2)
        first = fleet.add_worker("acheng")
        second = fleet.add_worker("linzhou")
        app = FleetApp(fleet, lang, tmp_path / "saves")
        async with app.run_test(size=(200, 60)) as pilot:
            screen = app.screen
            assert isinstance(screen, FleetScreen)

            async def until(what: str, found: Callable[[], bool]) -> None:
                end = time.monotonic() + WAIT_S
                while not found():
                    assert time.monotonic() < end, f"{what}: not within {WAIT_S:.0f} s"
                    await pilot.pause(0.05)

            await until("both ready", lambda: first.ready and second.ready)
            # the process title `ps` shows, set by the worker itself
            await until(
                "acheng's process title",
                lambda: title_of(first.pid or 0) == "borrowed-keys worker acheng",
            )
            # the key bar lists w and every fault key, with the table's words
            bar = str(screen.query_one("#keybar", KeyBar).render())
            for _action, key, word in FAULT_KEYS:
                assert f"{key} {tr(word, lang)}" in bar
            assert f"w {tr('choose_worker', lang)}" in bar
            assert f"t {tr('fleet_skew_key', lang)}" in bar  # a clock's skew, its own key
            assert screen.chosen == "acheng"

            pid = first.pid or 0
            await pilot.press("z")  # stall: SIGSTOP
            await until("acheng stopped (T)", lambda: state_of(pid) == "T")
            await pilot.press("u")  # resume: SIGCONT
            await until("acheng running again", lambda: state_of(pid) not in ("T", None))
            await pilot.press("h")  # freeze the heartbeat: a line on its control channel
            await until("acheng frozen", lambda: first.frozen)
            await pilot.press("u")  # resume: its heartbeat back
            await until("acheng thawed", lambda: not first.frozen)
            # partition: SQLite has none, and it says why in those words, not any toast
            no_partition = tr("fleet_no_partition", lang)

            def toasts() -> list[str]:
                return [str(n.message) for n in app._notifications]

            assert no_partition not in toasts()
            await pilot.press("c")
            await until("no partition said", lambda: no_partition in toasts())

            await pilot.press("w")  # the next worker
            await until("linzhou chosen", lambda: screen.chosen == "linzhou")
            pid2 = second.pid or 0
            await pilot.press("k")  # kill: SIGKILL
            await until("linzhou gone", lambda: state_of(pid2) is None)
            grid = screen.query_one("#workers", WorkerGrid)
            killed = ended(-9, None, lang)
            await until(
                "the pane says how it ended",
                lambda: killed in str(grid.panes["linzhou"].border_title),
            )
            await pilot.press("u")  # a dead worker: restart under the same name
            await until("linzhou back", lambda: second.alive and second.pid != pid2)
            await until("linzhou running", lambda: state_of(second.pid or 0) not in (None, "T"))
            assert state_of(pid) not in (None, "T")  # the other one untouched

            # the palette lists every fault that acts on every worker, with its key
            titles = [title for title, _help, _run in FleetCommands(screen)._commands()]
            for f in FAULTS:
                if f.only_when is None:
                    word = tr(f.word, lang)
                    assert any(word in t and f"[{f.key}]" in t for t in titles), word
            assert any(tr("fleet_skew_key", lang) in t for t in titles)
    finally:
        fleet.close()


def test_a_killed_worker_is_said_killed_not_an_exit_status() -> None:
    assert ended(-9, None, "en") == "killed (SIGKILL)"
    assert ended(-9, None, "zh") == "已被杀死（SIGKILL）"
    assert ended(2, "borrowed-keys worker w1: stopped: disk full", "en").startswith("stopped:")
    assert ended(0, None, "en") == tr("fleet_exited", "en", status=0)
